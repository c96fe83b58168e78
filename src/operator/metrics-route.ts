import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { sendError } from '../http/error-body.ts';

/** Longest a scrape's text is reused; far below any Prometheus scrape interval. */
export const METRICS_RENDER_INTERVAL_MS = 1000;

/** The registry's text, rendered at most once per interval. */
export interface MetricsRender {
  text(): Promise<string>;
  /** How many times the registry has been rendered to text. */
  count(): number;
}

/**
 * The text is rendered at most once per interval and shared by every scrape in between, so a flood
 * of scrapes costs one render a second rather than one per request.
 */
export function cachedRender(registry: Registry, now: () => number): MetricsRender {
  let renders = 0;
  let renderedAt = Number.NEGATIVE_INFINITY;
  let latest: Promise<string> | undefined;
  return {
    count: () => renders,
    text() {
      const at = now();
      if (latest === undefined || at - renderedAt >= METRICS_RENDER_INTERVAL_MS) {
        renders += 1;
        renderedAt = at;
        // Concurrent scrapes share this promise, so a render in progress is never started twice.
        latest = registry.metrics();
        latest.catch(() => {
          latest = undefined;
        });
      }
      return latest;
    },
  };
}

export interface MetricsRouteOptions {
  readonly render: MetricsRender;
  readonly contentType: string;
}

/** GET (and HEAD) /metrics in Prometheus text, without a token: Prometheus scrapes it. */
export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (app, { render, contentType }) => {
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    let text: string;
    try {
      text = await render.text();
    } catch {
      return sendError(reply, 'service_unavailable', 'the metrics could not be collected; retry the scrape');
    }
    return reply.type(contentType).send(text);
  });
};
