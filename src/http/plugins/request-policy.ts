import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { allowBriefCaching, stampRequestIdAndCaching } from '../cache-control.ts';
import { sendError } from '../error-body.ts';
import { appendOnSend } from '../route-hooks.ts';

/**
 * Every answer's request id and caching policy, and the 503 once shutdown begins. Registered first:
 * its onRequest hook runs before any other step can answer. Once shutdown begins, requests still
 * arriving on open connections (pipelined or kept alive) get 503 and the connection closes, so
 * clients retry on another instance; in-flight requests finish. Both jobs share one hook, since
 * every hook adds to the time of every request.
 */
export const requestPolicy = fastifyPlugin(
  async (app: FastifyInstance) => {
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });
    app.addHook('onRequest', (request, reply, done) => {
      stampRequestIdAndCaching(request, reply);
      if (!closing) return done();
      reply.header('connection', 'close');
      // Answered here: a callback hook that sends does not call done().
      sendError(reply, 'service_unavailable', 'the service is shutting down; retry the request');
    });
    app.addHook('onRoute', (route) => {
      if (route.config?.cacheable === true) appendOnSend(route, allowBriefCaching);
    });
  },
  { name: 'request-policy' },
);
