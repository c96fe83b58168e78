import type { FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';
import { appendOnSend } from './route-hooks.ts';

/**
 * Caching policy of every response. Everything but the public documents is `no-store`: answers to a
 * key are the account's own (and carry its quota), errors and health change from one request to the
 * next, so no cache, shared or private, may keep them.
 */
export const NO_STORE = 'no-store';

/** The public documents (/v1/openapi.json, the /docs page and assets): the same for everyone, changed by a release. */
export const PUBLIC_DOCUMENT = 'public, max-age=300';

/**
 * The headers every answer carries from the start: its request id, and `no-store` until a public
 * document succeeds (allowBriefCaching). Stamped by the first onRequest hook
 * (plugins/request-policy.ts), and by the answers given before any hook runs.
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
export const allowBriefCaching: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode < 400) reply.header('cache-control', PUBLIC_DOCUMENT);
  done(null, payload);
};
