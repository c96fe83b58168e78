import type { FastifyPluginAsync } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { READINESS_FRESH_MS, READINESS_INTERVAL_MS, type ReadinessMonitor } from '../../readiness.ts';

export interface OpsRouteOptions {
  /** What /readyz checks: storage always, Redis when configured. */
  readonly readiness: ReadinessMonitor;
}

/**
 * Operator endpoints: no key, no rate limit, not in the API document. Metrics are not among them:
 * they name accounts, so they are on the operator listener (src/operator/app.ts).
 */
export const opsRoutes: FastifyPluginAsync<OpsRouteOptions> = async (app, options) => {
  const config = { public: true };
  app.get('/healthz', { config, schema: { hide: true } }, async (_request, reply) => reply.send({ status: 'ok' }));

  // A probe of its own (or the one under way), not the last reading: a balancer asks to know now.
  app.get('/readyz', { config, schema: { hide: true } }, async (_request, reply) => {
    const { results } = await options.readiness.probe();
    const failed = results.filter((result) => !result.ok);
    const checks = Object.fromEntries(results.map((result) => [result.name, result.ok ? 'ok' : 'unreachable']));
    if (failed.length === 0) return reply.send({ status: 'ready', checks });
    const names = failed.map((result) => result.name).join(', ');
    return reply
      .code(503)
      .send({ code: 'service_unavailable', message: `not ready: ${names} unreachable`, status: 503, checks });
  });
};

/**
 * `petstore_dependency_up{dependency}`: each dependency /readyz checks, so an alert sees an instance
 * that is not ready whether or not a balancer asks it. The scrape reads the last probe, which runs
 * beside it (ReadinessMonitor): it never waits for a dependency that does not answer, so a scrape
 * answers within Prometheus's timeout whatever storage does, and a live instance is never `up == 0`.
 */
export function exportReadiness(registry: Registry, readiness: ReadinessMonitor): void {
  new Gauge({
    name: 'petstore_dependency_up',
    help:
      'Whether each dependency /readyz checks (storage, and Redis when configured) answered its last probe: 1 or 0. ' +
      `Probed every ${READINESS_INTERVAL_MS / 1000} s, and beside a scrape that finds the reading older than ` +
      `${READINESS_FRESH_MS / 1000} s.`,
    labelNames: ['dependency'],
    registers: [registry],
    collect() {
      const reading = readiness.latest();
      for (const result of reading?.results ?? []) this.set({ dependency: result.name }, result.ok ? 1 : 0);
    },
  });
}
