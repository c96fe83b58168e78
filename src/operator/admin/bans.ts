import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { auditContextOf } from '../../audit/audit-actors.ts';
import { BanKeyParams, KeyRef, refs } from './admin-schemas.ts';
import { iso, keyElement } from './admin-views.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'clock'>;

/** Bans in force, and lifting one. */
export const banRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts, clock } = options;

  app.get(
    `${ADMIN_PREFIX}/bans`,
    {
      schema: {
        operationId: 'listBans',
        tags: ['keys'],
        summary: 'Bans in force',
        description:
          'Bans recorded in storage that have neither ended nor been lifted. A ban that storage could not record ' +
          'holds in the rate limiter alone and is not listed.',
        response: { 200: adminAnswer('Bans in force, newest first.', refs.Bans), ...adminErrors() },
      },
    },
    async (_request, reply) => {
      const bans = await accounts.listActiveBans();
      return reply.send({
        bans: bans.map((ban) => ({
          keyId: ban.keyId,
          account: ban.account,
          startedAt: iso(ban.startedAt),
          until: iso(ban.until),
        })),
      });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/bans/:keyId/lift`,
    {
      schema: {
        operationId: 'liftBan',
        tags: ['keys'],
        summary: "End a key's ban",
        description:
          'As `petstore ban lift`: at once here and, through Redis, on every instance; 404 when the key is not banned.',
        params: BanKeyParams,
        response: { 200: adminAnswer('The key, no longer banned.', KeyRef), ...adminErrors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const key = await accounts.liftBan(request.params.keyId, auditContextOf(request));
      return reply.send(keyElement(key, clock.now()));
    },
  );
};
