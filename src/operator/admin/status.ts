import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { probe } from '../../http/routes/ops.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from '../admin-openapi.ts';
import { refs } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'backend' | 'readiness' | 'probeTimeoutMs'>;

/** The instance and its dependencies. */
export const statusRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts } = options;

  app.get(
    `${ADMIN_PREFIX}/status`,
    {
      schema: {
        operationId: 'getStatus',
        tags: ['operator'],
        summary: 'The instance and its dependencies',
        response: { 200: adminAnswer('Storage, Redis, and what storage holds.', refs.Status), ...adminErrors() },
      },
    },
    async (_request, reply) => {
      const probes = await Promise.all(options.readiness.map((check) => probe(check, options.probeTimeoutMs)));
      const storage = probes.find((result) => result.name === options.backend);
      const redis = probes.find((result) => result.name === 'redis');
      const [accountCount, bans] = await Promise.all([
        accounts.countAccounts().catch(() => null),
        accounts.listActiveBans().catch(() => null),
      ]);
      return reply.send({
        storage: { backend: options.backend, ready: storage?.ok ?? false },
        redis: redis === undefined ? null : { ready: redis.ok },
        accounts: accountCount,
        activeBans: bans === null ? null : bans.length,
      });
    },
  );
};
