import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from '../admin-openapi.ts';
import { auditContextOf } from '../audit/audit-actors.ts';
import { AccountPresenter } from './account-presenter.ts';
import { AccountParams, AccountRef, NewAccountBody, PlanChangeBody, refs } from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'clock' | 'limiter'>;

/** Accounts: listed, created, read, and their plans changed. */
export const accountRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts } = options;
  const present = new AccountPresenter(options);

  app.get(
    `${ADMIN_PREFIX}/accounts`,
    {
      schema: {
        operationId: 'listAccounts',
        tags: ['accounts'],
        summary: 'Every account',
        response: { 200: adminAnswer('Every account, oldest first.', refs.Accounts), ...adminErrors() },
      },
    },
    async (_request, reply) => {
      const listed = await accounts.listAccountsWithKeys();
      return reply.send({
        accounts: await Promise.all(listed.map(({ account, keys }) => present.account(account, keys))),
      });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/accounts`,
    {
      schema: {
        operationId: 'createAccount',
        tags: ['accounts'],
        summary: 'Create an account',
        description:
          'As `petstore account create`. `enterprise` needs `perMinute` and `perDay`; other plans take neither.',
        body: NewAccountBody,
        response: {
          201: adminAnswer('The new account.', AccountRef),
          ...adminErrors(400, 403, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { name, ...choice } = request.body;
      const account = await accounts.createAccount(name, { ...choice, naming: 'fields' }, auditContextOf(request));
      return reply.code(201).send(await present.account(account, { total: 0, active: 0, lastUsedAt: null }));
    },
  );

  app.get(
    `${ADMIN_PREFIX}/accounts/:name`,
    {
      schema: {
        operationId: 'getAccount',
        tags: ['accounts'],
        summary: 'One account and its keys',
        params: AccountParams,
        response: {
          200: adminAnswer('The account, with its keys listed.', refs.AccountDetail),
          ...adminErrors(400, 404),
        },
      },
    },
    async (request, reply) => reply.send(await present.detail(request.params.name)),
  );

  app.put(
    `${ADMIN_PREFIX}/accounts/:name/plan`,
    {
      schema: {
        operationId: 'setPlan',
        tags: ['accounts'],
        summary: "Change an account's plan",
        description: 'As `petstore account set-plan`; servers apply it within `KEY_CACHE_TTL_MS`.',
        params: AccountParams,
        body: PlanChangeBody,
        response: {
          200: adminAnswer('The account with its new plan.', AccountRef),
          ...adminErrors(400, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      await accounts.setPlan(request.params.name, { ...request.body, naming: 'fields' }, auditContextOf(request));
      return reply.send(await present.described(request.params.name));
    },
  );
};
