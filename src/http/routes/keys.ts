import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { decodeKeyCursor, encodeKeyCursor, type HolderKeyService } from '../../auth/holder-keys.ts';
import type { ApiKeyRecord } from '../../domain/keys.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import { errorResponses, headerRefs, RATE_LIMIT_HEADERS, RESPONSE_HEADERS } from '../openapi-responses.ts';
import { HOLDER_KEYS_EXAMPLE, HolderKeysRef, ListKeysQuerySchema, type HolderKey } from './key-schemas.ts';

export interface KeyRouteOptions {
  readonly keys: HolderKeyService;
  /** Absolute origin for Link headers; empty for relative references. */
  readonly publicBaseUrl: string;
}

/**
 * The account holder's keys: HTTP in, calls of the holder key service (src/auth/holder-keys.ts), HTTP
 * out. Every route needs `keys:manage`, which no key holds unless it was named for it.
 */
export const keyRoutes: FastifyPluginAsync<KeyRouteOptions> = async (app, options) => {
  listKeysRoute(app, options);
};

function listKeysRoute(untyped: FastifyInstance, { keys, publicBaseUrl }: KeyRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/keys',
    {
      config: { usage: 'keys', scope: 'keys:manage' },
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: "List your account's keys",
        description:
          "The keys of the caller's account, oldest first, revoked and expired ones included; never a secret. " +
          'When more may follow, a `Link: <…>; rel="next"` header carries the URL of the next page (same limit, ' +
          'plus an opaque `cursor`). Unknown query parameters are ignored; a repeated known parameter is refused.',
        querystring: ListKeysQuerySchema,
        response: {
          200: {
            description: "A page of the account's keys.",
            headers: headerRefs(
              ['Link', 'RFC 8288 `rel="next"` link, absent on the last page.'],
              ...RATE_LIMIT_HEADERS,
              ...RESPONSE_HEADERS,
            ),
            content: { 'application/json': { schema: HolderKeysRef, example: HOLDER_KEYS_EXAMPLE } },
          },
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const { limit = 20, cursor } = request.query;
      const after = cursor === undefined ? undefined : decodeKeyCursor(cursor);
      const page = await keys.list(callerOf(request), { after, limit });
      const last = page.items.at(-1);
      if (page.more && last !== undefined)
        reply.header('link', `<${publicBaseUrl}/v1/keys?limit=${limit}&cursor=${encodeKeyCursor(last)}>; rel="next"`);
      return reply.send(page.items.map(holderKeyView));
    },
  );
}

/** A key as its holder sees it: times as ISO 8601, no hash, no ban (GET /v1/usage shows the caller's own). */
export function holderKeyView(key: ApiKeyRecord): HolderKey {
  return {
    id: key.id,
    scopes: [...key.scopes],
    createdAt: new Date(key.createdAt).toISOString(),
    lastUsedAt: iso(key.lastUsedAt),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
  };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function callerOf(request: FastifyRequest): KeyPrincipal {
  const { principal } = request;
  // Set by the API key pipeline before any handler runs; its absence is a wiring fault, answered as a 500.
  if (principal === undefined) throw new Error(`${request.routeOptions.url ?? 'a key route'} ran without its key`);
  return principal;
}
