import type { FastifyInstance, RouteOptions } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { errorResponses } from '../openapi-responses.ts';

/** The security scheme of the public document (src/http/public-document.ts) that a scope belongs to. */
const SCHEME = 'bearerAuth';

/**
 * What a route's `scope` (its config) tells the document: the operation's security requirement names
 * the scope, and its answers include the 403 a key without it gets. A route behind a key that names
 * no scope (nor `null`, any key) is refused when it is registered: left out, it would be open to
 * every key. The 403 itself is sent by the API key pipeline (plugins/api-key-pipeline.ts). Register
 * before the routes.
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
