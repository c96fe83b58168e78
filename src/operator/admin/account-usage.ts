import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { UsagePoint } from '../../usage/usage-service.ts';
import { deprecatedUsageView, historyView } from '../../usage/usage-views.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { requireAccount } from './account-presenter.ts';
import { AccountParams, HistoryQuery, refs } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'usage'>;

/** One account's usage: the last 30 days, and its history. */
export const accountUsageRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts, usage } = options;

  app.get(
    `${ADMIN_PREFIX}/accounts/:name/usage`,
    {
      schema: {
        operationId: 'getAccountUsage',
        tags: ['usage'],
        summary: "An account's requests in the last 30 days, and its deprecated calls",
        params: AccountParams,
        response: { 200: adminAnswer('What the account sent.', refs.AccountUsage), ...adminErrors(400, 404) },
      },
    },
    async (request, reply) => {
      const account = await requireAccount(accounts, request.params.name);
      const range = usage.parseRange({ granularity: 'day' });
      const [points, deprecated] = await Promise.all([usage.history(account.id, range), usage.deprecated(account.id)]);
      return reply.send({
        account: account.name,
        last30Days: totalsOf(points),
        deprecated: [deprecatedUsageView(deprecated)],
      });
    },
  );

  app.get(
    `${ADMIN_PREFIX}/accounts/:name/usage/history`,
    {
      schema: {
        operationId: 'getAccountUsageHistory',
        tags: ['usage'],
        summary: "An account's requests per hour or day",
        params: AccountParams,
        querystring: HistoryQuery,
        response: { 200: adminAnswer('The history.', refs.History), ...adminErrors(400, 404) },
      },
    },
    async (request, reply) => {
      const range = usage.parseRange(request.query);
      const account = await requireAccount(accounts, request.params.name);
      return reply.send(historyView(range, await usage.history(account.id, range)));
    },
  );
};

function totalsOf(points: readonly UsagePoint[]): { requests: number; refusals: number } {
  let requests = 0;
  let refusals = 0;
  for (const point of points) {
    requests += point.count;
    if (point.outcome === '429' || point.outcome === 'banned') refusals += point.count;
  }
  return { requests, refusals };
}
