import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  decodeKeyCursor,
  encodeKeyCursor,
  ROLL_GRACE,
  type HolderCaller,
  type HolderCreatedKey,
  type HolderKeyService,
} from '../../auth/holder-keys.ts';
import { bearerToken, type KeyVerifier } from '../../auth/key-verifier.ts';
import type { ApiKeyRecord, KeyActor } from '../../domain/keys.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import {
  errorResponses,
  headerRefs,
  ownErrorResponse,
  RATE_LIMIT_HEADERS,
  RESPONSE_HEADERS,
} from '../openapi-responses.ts';
import {
  CREATED_HOLDER_KEY_EXAMPLE,
  CreatedHolderKeyRef,
  HOLDER_KEY_EXAMPLE,
  HOLDER_KEYS_EXAMPLE,
  HolderKeyRef,
  HolderKeysRef,
  KeyIdParamsSchema,
  ListKeysQuerySchema,
  NewHolderKeyRef,
  RollKeyRef,
  type CreatedHolderKey,
  type HolderKey,
} from './key-schemas.ts';

export interface KeyRouteOptions {
  readonly keys: HolderKeyService;
  /** This instance forgets a revoked or rolled key at once; the others within KEY_CACHE_TTL_MS. */
  readonly keyVerifier: KeyVerifier;
  /** Absolute origin for Link headers; empty for relative references. */
  readonly publicBaseUrl: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

const IDEMPOTENCY_HEADER = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: '^[\\x21-\\x7e]{1,255}$',
      description:
        'Makes a retry return the first answer, the new key included, to the same calling key only, for 24 hours.',
      'x-expectation': '1 to 255 visible ASCII characters, sent once',
    }),
  ),
});

const IDEMPOTENCY =
  'An optional `Idempotency-Key` header makes retries safe, as for creating a pet: the same key and body return ' +
  'the first answer, secret included, and mint no second key; with another body, or from another key of the ' +
  'account, it is 422 `idempotency_conflict`. The answer is kept 24 hours, sealed with the calling key, so ' +
  'only that key can have it replayed. A 503 does not tell whether the key was made: retry with the same ' +
  'Idempotency-Key.';

/** The headers of a 201 that carries a new key. */
const CREATED_HEADERS = headerRefs('Idempotent-Replayed', ...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS);

/**
 * The account holder's keys: HTTP in, calls of the holder key service (src/auth/holder-keys.ts), HTTP
 * out. Every route needs `keys:manage`, which no key holds unless it was named for it.
 */
export const keyRoutes: FastifyPluginAsync<KeyRouteOptions> = async (app, options) => {
  listKeysRoute(app, options);
  createKeyRoute(app, options);
  revokeKeyRoute(app, options);
  rollKeyRoute(app, options);
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
      const page = await keys.list(principalOf(request), { after, limit });
      const last = page.items.at(-1);
      if (page.more && last !== undefined)
        reply.header('link', `<${publicBaseUrl}/v1/keys?limit=${limit}&cursor=${encodeKeyCursor(last)}>; rel="next"`);
      return reply.send(page.items.map(holderKeyView));
    },
  );
}

function createKeyRoute(untyped: FastifyInstance, { keys }: KeyRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/keys',
    {
      config: { usage: 'keys', scope: 'keys:manage' },
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create a key',
        description:
          "A new key of the caller's account, with a name, scopes and an optional expiry. The answer carries the " +
          'key itself, once: store it now. A key gives only scopes it holds: naming another is 403 ' +
          '`insufficient_scope`, naming it. The account holds at most its limit of active keys (20 unless the ' +
          'operator set another); past it, 409 `key_limit`. ' +
          IDEMPOTENCY,
        headers: IDEMPOTENCY_HEADER,
        body: NewHolderKeyRef,
        response: {
          201: {
            description: 'The new key, with its secret.',
            headers: CREATED_HEADERS,
            content: { 'application/json': { schema: CreatedHolderKeyRef, example: CREATED_HOLDER_KEY_EXAMPLE } },
          },
          ...errorResponses(400, 401, 413, 415, 422, 429),
          409: ownErrorResponse(
            'The account holds as many active keys as it may (`key_limit`): revoke one, or let one expire.',
            'key_limit',
          ),
        },
      },
    },
    async (request, reply) => {
      const { name, scopes, expiresInSeconds } = request.body;
      const answer = await keys.create(callerOf(request), { name, scopes, expiresInSeconds }, createdJson);
      sendCreated(reply, answer);
    },
  );
}

function revokeKeyRoute(untyped: FastifyInstance, { keys, keyVerifier }: KeyRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/keys/:keyId/revoke',
    {
      config: { usage: 'keys', scope: 'keys:manage' },
      schema: {
        operationId: 'revokeKey',
        tags: ['keys'],
        summary: 'Revoke a key',
        description:
          "Revokes a key of the caller's account; a key may revoke itself. This instance refuses it at once, " +
          'every other within `KEY_CACHE_TTL_MS` (at most 1 s). Revoking twice keeps the first time. Another ' +
          "account's key id is 404, as an unknown one. It takes no body.",
        params: KeyIdParamsSchema,
        response: {
          200: {
            description: 'The revoked key.',
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: {
              'application/json': {
                schema: HolderKeyRef,
                example: {
                  ...HOLDER_KEY_EXAMPLE,
                  revokedAt: '2026-11-25T11:00:00.000Z',
                  revokedBy: { kind: 'key', id: HOLDER_KEY_EXAMPLE.id },
                },
              },
            },
          },
          ...errorResponses(400, 401, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const revoked = await keys.revoke(callerOf(request), request.params.keyId);
      keyVerifier.invalidateKey(revoked.id);
      return reply.send(holderKeyView(revoked));
    },
  );
}

function rollKeyRoute(untyped: FastifyInstance, { keys, keyVerifier }: KeyRouteOptions): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/keys/:keyId/roll',
    {
      config: { usage: 'keys', scope: 'keys:manage' },
      schema: {
        operationId: 'rollKey',
        tags: ['keys'],
        summary: 'Roll a key: a new one with the same name and scopes',
        description:
          "For a key that leaked, or is due for rotation: a new key with the old one's name and scopes (and, if " +
          'the old one had an expiry, the same lifetime from now), and the old key expires at the end of the ' +
          `grace period: \`gracePeriodSeconds\`, ${ROLL_GRACE.minimum} (at once) to ${ROLL_GRACE.maximum} (7 days), ` +
          'default 86400 (24 hours); an earlier expiry of its own is kept. Deploy the new key, then let the old ' +
          'one expire or revoke it. The old key must be active (else 409 `key_inactive`); its scopes must be ' +
          "ones the caller holds (else 403 `insufficient_scope`); another account's key id is 404. The new key " +
          'replaces the old one, so it needs no room under the limit of active keys. ' +
          IDEMPOTENCY,
        headers: IDEMPOTENCY_HEADER,
        params: KeyIdParamsSchema,
        body: RollKeyRef,
        response: {
          201: {
            description: 'The new key, with its secret.',
            headers: CREATED_HEADERS,
            content: { 'application/json': { schema: CreatedHolderKeyRef, example: CREATED_HOLDER_KEY_EXAMPLE } },
          },
          ...errorResponses(400, 401, 404, 413, 415, 422, 429),
          409: ownErrorResponse(
            'The key is revoked or expired (`key_inactive`), or, with the old key past its own limit already, ' +
              'the account holds as many active keys as it may (`key_limit`).',
            'key_inactive',
            'key_limit',
          ),
        },
      },
    },
    async (request, reply) => {
      const { keyId } = request.params;
      const answer = await keys.roll(callerOf(request), keyId, request.body.gracePeriodSeconds, createdJson);
      keyVerifier.invalidateKey(keyId);
      sendCreated(reply, answer);
    },
  );
}

/** A key as its holder sees it: times as ISO 8601, no hash, no ban (GET /v1/usage shows the caller's own). */
export function holderKeyView(key: ApiKeyRecord): HolderKey {
  return {
    id: key.id,
    name: key.name,
    scopes: [...key.scopes],
    // Before they were recorded, only the operator could create or revoke a key.
    createdBy: makerView(key.createdBy),
    revokedBy: key.revokedAt === null ? null : makerView(key.revokedBy),
    createdAt: new Date(key.createdAt).toISOString(),
    lastUsedAt: iso(key.lastUsedAt),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
  };
}

/** The operator's tokens and users are the operator's business: the holder sees the operator, or its own key. */
function makerView(actor: KeyActor | null): HolderKey['createdBy'] {
  return actor?.kind === 'key' ? { kind: 'key', id: actor.id } : { kind: 'operator' };
}

function createdJson(created: HolderCreatedKey): string {
  const body: CreatedHolderKey = { key: created.key, ...holderKeyView(created.record) };
  return JSON.stringify(body);
}

/** A 201 with a new key, written by createdJson or replayed as it was first sent. */
function sendCreated(reply: FastifyReply, answer: { body: string; replayed: boolean }): void {
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  reply.code(201).type(JSON_TYPE).send(answer.body);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function principalOf(request: FastifyRequest): KeyPrincipal {
  const { principal } = request;
  // Set by the API key pipeline before any handler runs; its absence is a wiring fault, answered as a 500.
  if (principal === undefined) throw new Error(`${request.routeOptions.url ?? 'a key route'} ran without its key`);
  return principal;
}

function callerOf(request: FastifyRequest): HolderCaller {
  const principal = principalOf(request);
  const secret = bearerToken(request.headers.authorization);
  if (secret === undefined) throw new Error(`${request.routeOptions.url ?? 'a key route'} ran without its key`);
  const idempotencyKey = request.headers['idempotency-key'];
  return {
    principal,
    secret,
    requestId: request.id,
    idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
  };
}
