import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { parseDuration } from '../../domain/duration.ts';
import { ValidationError } from '../../errors.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { auditContextOf } from '../../audit/audit-actors.ts';
import { afterKey, keyCursor, nextCursor } from './admin-cursors.ts';
import { AccountParams, ADMIN_PAGE_LIMIT, KeyIdParams, KeyRef, KeysQuery, NewKeyBody, refs } from './admin-schemas.ts';
import { keyElement } from './admin-views.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'clock' | 'keyVerifier'>;

/** An account's keys: listed, created, revoked. */
export const keyRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts, clock } = options;

  app.get(
    `${ADMIN_PREFIX}/accounts/:name/keys`,
    {
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: "An account's keys, a page at a time",
        description:
          'Oldest first. `nextCursor` is the cursor of the next page (null on the last); pass it with the same ' +
          '`limit`.',
        params: AccountParams,
        querystring: KeysQuery,
        response: { 200: adminAnswer('A page of its keys, oldest first.', refs.Keys), ...adminErrors(400, 404) },
      },
    },
    async (request, reply) => {
      const { limit = ADMIN_PAGE_LIMIT.default, cursor } = request.query;
      const after = afterKey(cursor);
      const page = await accounts.pageKeys(request.params.name, { after, limit });
      const now = clock.now();
      return reply.send({
        keys: page.items.map((key) => keyElement(key, now)),
        nextCursor: nextCursor(page, keyCursor),
      });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/accounts/:name/keys`,
    {
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create a key',
        description:
          'As `petstore key create`. The key is in this answer only. The body may be left out: the key then ' +
          'never expires and has every scope.',
        params: AccountParams,
        body: NewKeyBody,
        response: {
          201: adminAnswer('The new key, with its secret.', refs.CreatedKey),
          ...adminErrors(400, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { expiresIn, scopes } = request.body;
      const ms = expiresIn === undefined ? undefined : parseDuration(expiresIn);
      if (expiresIn !== undefined && ms === undefined) {
        throw new ValidationError(
          'invalid_body',
          `field 'expiresIn' must be a duration such as 90s, 15m, 12h, 30d or 2w (got ${JSON.stringify(expiresIn)})`,
        );
      }
      const choice = { expiresInMs: ms, scopes };
      const created = await accounts.createKey(request.params.name, choice, auditContextOf(request));
      return reply.code(201).send({ key: created.key, ...keyElement(created.record, clock.now()) });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/keys/:id/revoke`,
    {
      schema: {
        operationId: 'revokeKey',
        tags: ['keys'],
        summary: 'Revoke a key',
        description:
          'As `petstore key revoke`. This instance refuses the key at once; the others within `KEY_CACHE_TTL_MS`. ' +
          'Revoking twice keeps the first time.',
        params: KeyIdParams,
        response: { 200: adminAnswer('The revoked key.', KeyRef), ...adminErrors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const key = await accounts.revokeKey(request.params.id, auditContextOf(request));
      options.keyVerifier.invalidateKey(key.id);
      return reply.send(keyElement(key, clock.now()));
    },
  );
};
