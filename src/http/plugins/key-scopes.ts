import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { KeyPrincipal } from '../../domain/principal.ts';
import { sendError } from '../error-body.ts';
import { documentedPath } from '../openapi.ts';
import { errorResponses } from '../openapi-responses.ts';

/** The security scheme of the public document (src/http/public-document.ts) that a scope belongs to. */
const SCHEME = 'bearerAuth';

/**
 * What a route's `scope` (its config) tells the document: the operation's security requirement names
 * the scope, and its answers include the 403 a key without it gets. A route behind a key that names
 * no scope (nor `null`, any key) is refused when it is registered: left out, it would be open to
 * every key. Register before the routes.
 */
export const keyScopes = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      if (route.config?.public === true) return;
      const scope = route.config?.scope;
      if (scope === undefined)
        throw new Error(`${String(route.method)} ${route.url} is behind a key but names no scope`);
      if (scope !== null) documentScope(route, scope);
    });
  },
  { name: 'key-scopes' },
);

function documentScope(route: RouteOptions, scope: string): void {
  const schema = route.schema ?? {};
  const response = typeof schema.response === 'object' && schema.response !== null ? schema.response : {};
  const forbidden = errorResponses(403)[403];
  route.schema = { ...schema, security: [{ [SCHEME]: [scope] }], response: { ...response, 403: forbidden } };
}

/**
 * Answers 403 `insufficient_scope` when the verified key lacks the scope the route needs; run after
 * the limits step, so the refused request was counted like any other of the key and its answer
 * carries the rate-limit headers. Reads only the cached principal: no storage round trip.
 */
export function refuseOutOfScope(request: FastifyRequest, reply: FastifyReply, principal: KeyPrincipal): void {
  const scope = request.routeOptions.config.scope;
  if (scope === undefined || scope === null || principal.scopes.includes(scope)) return;
  const operation = `${request.method} ${documentedPath(request.routeOptions.url ?? request.url)}`;
  const held = principal.scopes.join(', ');
  reply.header(
    'www-authenticate',
    `Bearer realm="petstore", error="insufficient_scope", scope="${scope}", ` +
      `error_description="the key lacks the scope ${scope}"`,
  );
  sendError(
    reply,
    'insufficient_scope',
    `this API key may not call ${operation}: that needs the scope '${scope}', and the key has ${held}`,
  );
}
