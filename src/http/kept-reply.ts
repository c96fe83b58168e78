import type { FastifyReply } from 'fastify';
import type { Representation } from '../net/representation.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The Representation whose identity bytes the reply sends (sendKept); undefined for any other body. */
    representation: Representation | undefined;
  }
}

/**
 * Sends a body that never changes (keptBody's, a console file's): the content-coding hook
 * (plugins/content-coding.ts) gives it its ETag, answers a matching If-None-Match with 304, and
 * sends its compressed forms. The caller sets the Content-Type.
 */
export function sendKept(reply: FastifyReply, representation: Representation): FastifyReply {
  reply.representation = representation;
  return reply.send(representation.identity);
}
