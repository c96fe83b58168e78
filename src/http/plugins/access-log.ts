import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { Metrics } from '../metrics.ts';

/**
 * One access-log line and the request metrics of every answer, once it is sent. The app turns
 * Fastify's own two lines per request off; every line of a request carries its id as `reqId`.
 */
export const accessLog = fastifyPlugin<{ metrics: Metrics }>(
  async (app: FastifyInstance, { metrics }: { metrics: Metrics }) => {
    app.addHook('onResponse', (request, reply, done) => {
      const { method, url } = request;
      const route = request.routeOptions.url ?? 'unmatched';
      const status = reply.statusCode;
      metrics.answered(method, route, status, reply.elapsedTime / 1000);
      // The key's id, never the key: the line must be safe to ship to any log store.
      const key = request.principal?.keyId;
      request.log.info({ method, url, status, ms: Math.round(reply.elapsedTime * 10) / 10, key }, 'request');
      done();
    });
  },
  { name: 'access-log' },
);
