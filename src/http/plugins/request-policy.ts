import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { NO_STORE, PUBLIC_DOCUMENT } from '../cache-control.ts';
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

/**
 * The headers every answer carries from the start: its request id, and `no-store` until a public
 * document succeeds (allowBriefCaching). Also for answers given before any hook runs.
 */
export function stampRequestIdAndCaching(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).header('cache-control', NO_STORE);
}

/**
 * Makes a route a public document: served without credentials, its successful answers cached
 * briefly. For routes a library registers (the reference page), whose config is not ours to write;
 * routes of our own say `cacheable` in their config.
 */
export function servePublicDocument(route: RouteOptions): void {
  route.config = { ...route.config, public: true, cacheable: true };
  appendOnSend(route, allowBriefCaching);
}

/** Public documents, and only their successful answers, may be cached briefly; @fastify/static says max-age=0. */
const allowBriefCaching: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode < 400) reply.header('cache-control', PUBLIC_DOCUMENT);
  done(null, payload);
};
