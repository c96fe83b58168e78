import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { METHODS } from 'node:http';
import { sendError } from '../http/error-body.ts';

/** Every method Node parses; CONNECT never reaches routing (protocol-edges answers it). */
const ALL_METHODS = METHODS.filter((method) => method !== 'CONNECT');
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The methods each path of the listener answers, gathered as its routes are added. */
export function routeMethods(app: FastifyInstance): Map<string, Set<string>> {
  const known = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = known.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    if (methods.has('GET')) methods.add('HEAD');
    known.set(route.url, methods);
  });
  return known;
}

/**
 * Every other method on the listener's paths: 405 with Allow and the Error body, instead of 404.
 * Registered after every route; a path that needs a token answers 401 first, as any request to it.
 */
export function answerOtherMethods(app: FastifyInstance, known: ReadonlyMap<string, ReadonlySet<string>>): void {
  // Fastify routes only the common methods unless told; the others would fall through to 404.
  for (const method of ALL_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  for (const [url, methods] of [...known].map(([url, set]): [string, string[]] => [url, [...set]])) {
    const allowed = methods.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const others = ALL_METHODS.filter((method) => !allowed.includes(method));
    if (others.length === 0) continue;
    const allow = allowed.join(', ');
    const shown = url.replace(/:(\w+)/g, '{$1}');
    const answer = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      reply.header('allow', allow);
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed on ${shown}; allowed: ${allow}`);
    };
    app.route({
      method: others,
      url,
      schema: { hide: true },
      // Answered before the body is read: its body is irrelevant.
      onRequest: (request, reply) => {
        answer(request, reply);
      },
      handler: answer,
    });
  }
}

function rank(method: string): number {
  const index = ORDER.indexOf(method);
  return index < 0 ? ORDER.length : index;
}
