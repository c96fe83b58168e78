import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { adminAnswer, adminErrors, ADMIN_PREFIX } from './admin-openapi.ts';
import { auditContextOf } from '../../audit/audit-actors.ts';
import { listed } from '../../domain/limit-windows.ts';
import { AccountPresenter } from './account-presenter.ts';
import { accountCursor, afterAccount, nextCursor } from './admin-cursors.ts';
import {
  AccountParams,
  AccountRef,
  AccountsQuery,
  ADMIN_PAGE_LIMIT,
  KeyLimitBody,
  planBodies,
  refs,
} from './admin-schemas.ts';
import type { AdminRouteOptions } from './admin-routes.ts';

type Needs = Pick<AdminRouteOptions, 'accounts' | 'clock' | 'limiter' | 'quotas'>;

/** Accounts: listed, created, read, and their plans changed. */
export const accountRoutes: FastifyPluginAsync<Needs> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts } = options;
  const present = new AccountPresenter(options);
  const { windows } = options.quotas;
  const bodies = planBodies(windows);
  const fields = windows.map((window) => `\`${window.field}\``);
  const needs = `\`enterprise\` needs ${listed(fields)}; other plans take ${fields.length === 2 ? 'neither' : 'none'}`;

  app.get(
    `${ADMIN_PREFIX}/accounts`,
    {
      schema: {
        operationId: 'listAccounts',
        tags: ['accounts'],
        summary: 'Accounts, a page at a time',
        description:
          'Oldest first. `q` keeps the accounts whose name contains it, in any case. `nextCursor` is the ' +
          'cursor of the next page (null on the last); pass it with the same `q` and `limit`. A cursor stays ' +
          'valid: accounts created meanwhile come on a later page, never twice.',
        querystring: AccountsQuery,
        response: { 200: adminAnswer('A page of accounts, oldest first.', refs.Accounts), ...adminErrors(400) },
      },
    },
    async (request, reply) => {
      const { q, limit = ADMIN_PAGE_LIMIT.default, cursor } = request.query;
      const page = await accounts.pageAccounts({ nameContains: q, afterId: afterAccount(cursor), limit });
      return reply.send({
        accounts: await Promise.all(page.items.map(({ account, keys }) => present.account(account, keys))),
        nextCursor: nextCursor(page, ({ account }) => accountCursor(account.id)),
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
        description: `As \`petstore account create\`. ${needs}.`,
        body: bodies.newAccount,
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
        body: bodies.planChange,
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

  app.put(
    `${ADMIN_PREFIX}/accounts/:name/key-limit`,
    {
      schema: {
        operationId: 'setKeyLimit',
        tags: ['accounts'],
        summary: 'Change how many active keys an account may hold',
        description:
          'As `petstore account set-key-limit`. Its keys cannot create keys through `/v1/keys` past it (`409 ' +
          "key_limit`); keys it already holds past a lowered limit keep working. It does not limit the operator's " +
          'own `createKey`.',
        params: AccountParams,
        body: KeyLimitBody,
        response: {
          200: adminAnswer('The account with its new limit.', AccountRef),
          ...adminErrors(400, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      await accounts.setKeyLimit(request.params.name, request.body.keyLimit, auditContextOf(request));
      return reply.send(await present.described(request.params.name));
    },
  );
};
