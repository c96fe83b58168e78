import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { METHODS } from 'node:http';
import { sendError } from '../error-body.ts';

/** Paths of v1 and the methods each answers; any other method gets 405 with Allow. */
const KNOWN_PATHS: Record<string, string[]> = {
  '/v1/pets': ['GET', 'HEAD', 'POST'],
  '/v1/pets/:petId': ['GET', 'HEAD'],
  '/v1/usage': ['GET', 'HEAD'],
  '/v1/usage/history': ['GET', 'HEAD'],
};

/** Every method Node parses; CONNECT never reaches routing (plugins/protocol-edges.ts answers it). */
const ALL_METHODS = METHODS.filter((method) => method !== 'CONNECT');

/** Every other method on the paths of v1: 405 with Allow and the Error body, instead of 404. Registered last. */
export const methodNotAllowed: FastifyPluginAsync = async (app) => {
  // Fastify routes only the common methods unless told; the others would fall through to 404.
  for (const method of ALL_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  for (const [url, allowed] of Object.entries(KNOWN_PATHS)) {
    const others = ALL_METHODS.filter((method) => !allowed.includes(method));
    const allow = allowed.join(', ');
    const answer = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      reply.header('allow', allow);
      return sendError(
        reply,
        'method_not_allowed',
        `${request.method} is not allowed on ${url.replace(':petId', '{petId}')}; allowed: ${allow}`,
      );
    };
    app.route({
      method: others,
      url,
      schema: { hide: true },
      // Answered after authentication and limits but before the body is read: its body is irrelevant.
      // Answered here: a callback hook that sends does not call done().
      onRequest: (request, reply) => {
        answer(request, reply);
      },
      handler: answer,
    });
  }
};
