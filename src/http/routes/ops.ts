import type { FastifyPluginAsync } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { settleWithin } from '../../deadline.ts';

/** A dependency /readyz must reach: storage always, Redis when configured. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}

export interface OpsRouteOptions {
  readonly readiness: readonly ReadinessCheck[];
  /** Longest a probe may take before its dependency counts as unreachable. */
  readonly timeoutMs: number;
}

/**
 * Operator endpoints: no key, no rate limit, not in the API document. Metrics are not among them:
 * they name accounts, so they are on the operator listener (src/operator/app.ts).
 */
export const opsRoutes: FastifyPluginAsync<OpsRouteOptions> = async (app, options) => {
  const config = { public: true };
  app.get('/healthz', { config, schema: { hide: true } }, async (_request, reply) => reply.send({ status: 'ok' }));

  app.get('/readyz', { config, schema: { hide: true } }, async (_request, reply) => {
    const results = await Promise.all(options.readiness.map((dependency) => probe(dependency, options.timeoutMs)));
    const failed = results.filter((result) => !result.ok);
    const checks = Object.fromEntries(results.map((result) => [result.name, result.ok ? 'ok' : 'unreachable']));
    if (failed.length === 0) return reply.send({ status: 'ready', checks });
    const names = failed.map((result) => result.name).join(', ');
    return reply
      .code(503)
      .send({ code: 'service_unavailable', message: `not ready: ${names} unreachable`, status: 503, checks });
  });
};

export async function probe(dependency: ReadinessCheck, timeoutMs: number): Promise<{ name: string; ok: boolean }> {
  try {
    await settleWithin(dependency.check(), timeoutMs, () => new Error(`${dependency.name} did not answer in time`));
    return { name: dependency.name, ok: true };
  } catch {
    return { name: dependency.name, ok: false };
  }
}

/**
 * `petstore_dependency_up{dependency}`: each dependency /readyz checks, probed when the metrics are
 * scraped, so an alert sees an instance that is not ready whether or not a balancer asks it.
 */
export function exportReadiness(registry: Registry, readiness: readonly ReadinessCheck[], timeoutMs: number): void {
  new Gauge({
    name: 'petstore_dependency_up',
    help: 'Whether each dependency /readyz checks (storage, and Redis when configured) answered when scraped: 1 or 0.',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      const results = await Promise.all(readiness.map((dependency) => probe(dependency, timeoutMs)));
      for (const result of results) this.set({ dependency: result.name }, result.ok ? 1 : 0);
    },
  });
}
