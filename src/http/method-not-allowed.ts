import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { METHODS } from 'node:http';
import { sendError } from './error-body.ts';
import { documentedPath } from './document-paths.ts';

/** Every method Node parses; CONNECT never reaches routing (plugins/protocol-edges.ts answers it). */
const ALL_METHODS = METHODS.filter((method) => method !== 'CONNECT');
/** The order of Allow: the common methods first, the rest alphabetically. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The routes of each path, gathered as they are added (their options, which later onRoute hooks may still amend). */
export type RoutesByPath = ReadonlyMap<string, readonly RouteOptions[]>;

/**
 * Gathers the routes of each path as they are added, wherever they are added, so that no list of
 * paths exists anywhere: a route is known by being registered. Call before any route.
 */
export function collectRoutes(app: FastifyInstance): RoutesByPath {
  const known = new Map<string, RouteOptions[]>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const routes = known.get(route.url);
    if (routes === undefined) known.set(route.url, [route]);
    else routes.push(route);
  });
  return known;
}

/**
 * Every other method on the app's paths: 405 with Allow and the Error body, instead of 404.
 * Registered after every route. The answer is a route at that path carrying the path's openness, so
 * a path that needs a key or token answers 401 first, as any request to it does.
 */
export function answerOtherMethods(app: FastifyInstance, known: RoutesByPath): void {
  // Fastify routes only the common methods unless told; the others would fall through to 404.
  for (const method of ALL_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  for (const [url, routes] of [...known]) {
    const open = routes.every((route) => route.config?.public === true);
    const allowed = methodsOf(routes).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    // A route registered under two spellings of one path (`/docs`, `/docs/`) has its methods taken already.
    const others = ALL_METHODS.filter((method) => !allowed.includes(method) && !app.hasRoute({ method, url }));
    if (others.length === 0) continue;
    const allow = allowed.join(', ');
    const shown = documentedPath(url);
    const answer = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      reply.header('allow', allow);
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed on ${shown}; allowed: ${allow}`);
    };
    app.route({
      method: others,
      url,
      // Any valid key learns which methods a path has: the scopes guard what the methods do.
      config: { public: open, scope: null },
      schema: { hide: true },
      // Answered after authentication (and limits) but before the body is read: its body is irrelevant.
      // Answered here: a callback hook that sends does not call done().
      onRequest: (request, reply) => {
        answer(request, reply);
      },
      handler: answer,
    });
  }
}

function methodsOf(routes: readonly RouteOptions[]): string[] {
  const methods = new Set(routes.flatMap((route) => [route.method].flat()));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods];
}

function rank(method: string): number {
  const index = ORDER.indexOf(method);
  return index < 0 ? ORDER.length : index;
}
