import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { historyView } from '../../usage/usage-views.ts';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { HistoryQuery, refs, TOP_LIMIT, TopQuery } from './admin-schemas.ts';
import { iso } from './admin-views.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'usage'>;

/** Usage across accounts: the history, the top accounts, the callers of the deprecated operation. */
export const usageRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { usage } = options;

  app.get(
    `${ADMIN_PREFIX}/usage/history`,
    {
      schema: {
        operationId: 'getUsageHistory',
        tags: ['usage'],
        summary: 'Requests of every account per hour or day',
        querystring: HistoryQuery,
        response: { 200: adminAnswer('The history, all accounts summed.', refs.History), ...adminErrors(400) },
      },
    },
    async (request, reply) => {
      const range = usage.parseRange(request.query);
      return reply.send(historyView(range, await usage.history(undefined, range)));
    },
  );

  app.get(
    `${ADMIN_PREFIX}/usage/top`,
    {
      schema: {
        operationId: 'getTopAccounts',
        tags: ['usage'],
        summary: 'The accounts with the most requests or refusals',
        querystring: TopQuery,
        response: { 200: adminAnswer('The accounts, largest first.', refs.TopAccounts), ...adminErrors(400) },
      },
    },
    async (request, reply) => {
      const { by = 'requests', from, to, limit = TOP_LIMIT.default } = request.query;
      const range = usage.parseRange({ from, to });
      const top = await usage.top(by, range, limit);
      return reply.send({ by, from: iso(range.from), to: iso(range.to), accounts: top });
    },
  );

  app.get(
    `${ADMIN_PREFIX}/deprecated-callers`,
    {
      schema: {
        operationId: 'getDeprecatedCallers',
        tags: ['usage'],
        summary: 'Who still calls the deprecated getPet',
        description: 'Every account and key that called GET /v1/pets/{petId} in the last 30 days, most calls first.',
        response: { 200: adminAnswer('The callers.', refs.DeprecatedCallers), ...adminErrors() },
      },
    },
    async (_request, reply) => {
      const { since, sunset, callers } = await usage.deprecatedCallers();
      return reply.send({
        operation: 'getPet',
        sunset: iso(sunset),
        since: iso(since),
        callers: callers.map((caller) => ({ ...caller, lastCall: iso(caller.lastCall) })),
      });
    },
  );
};
