import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../auth/account-service.ts';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import { parseDuration } from '../domain/duration.ts';
import type { Clock } from '../clock.ts';
import { settleWithin } from '../deadline.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors.ts';
import type { ReadinessCheck } from '../http/routes/ops.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import { limitsFor } from '../domain/plans.ts';
import { accountQuota } from '../ratelimit/rate-limit-policy.ts';
import type { AccountKeyStats, AccountRecord, ApiKeyRecord, Store } from '../storage/store.ts';
import type { UsagePoint, UsageRange, UsageService } from '../usage/usage-service.ts';
import { adminAnswer, adminErrors, adminNoContent, ADMIN_PREFIX } from './admin-openapi.ts';
import {
  AccountParams,
  AccountRef,
  BanKeyParams,
  HistoryQuery,
  KeyIdParams,
  KeyRef,
  NewAccountBody,
  NewKeyBody,
  PlanChangeBody,
  refs,
  SessionBody,
  TopQuery,
  TOP_LIMIT,
  type AdminAccount,
  type AdminAccountDetail,
  type AdminHistory,
  type AdminKey,
  type KeyState,
} from './admin-schemas.ts';
import {
  INVALID_TOKEN,
  isSameOrigin,
  OPERATOR_COOKIE,
  sendOperatorUnauthorized,
  sendTooManyFailures,
  SESSION_PATH,
  type OperatorGate,
} from './operator-auth.ts';

export interface AdminRouteOptions {
  readonly accounts: AccountService;
  /** Which storage backend the status names. */
  readonly backend: Store['backend'];
  /** This process's key cache: a revocation here takes effect here at once. */
  readonly keyVerifier: KeyVerifier;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly readiness: readonly ReadinessCheck[];
  /** Longest a readiness probe may take. */
  readonly probeTimeoutMs: number;
  readonly usage: UsageService;
  readonly gate: OperatorGate;
}

/**
 * The admin API: HTTP in, calls of the services the CLI calls (AccountService, the usage service),
 * HTTP out. Every route is behind the operator token (operator-auth.ts), but the session's.
 */
export const adminRoutes: FastifyPluginAsync<AdminRouteOptions> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts, clock, usage } = options;
  const present = new AccountPresenter(options);

  app.post(
    SESSION_PATH,
    {
      schema: {
        operationId: 'logIn',
        tags: ['operator'],
        summary: 'Log in to the console',
        description:
          'Checks the token and sets it in the console cookie (HttpOnly, SameSite=Strict, Path=/; a session ' +
          'cookie). Failures count toward the per-address limit of failed authentications. A request carrying ' +
          'an `Origin` must come from this listener.',
        security: [],
        body: SessionBody,
        response: {
          204: adminNoContent('Logged in.', {
            'Set-Cookie': {
              type: 'string',
              description: `\`${OPERATOR_COOKIE}=<token>; HttpOnly; SameSite=Strict; Path=/\`.`,
            },
          }),
          ...adminErrors(400, 403, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const retryAfter = await options.gate.refusal(request);
      if (retryAfter !== undefined) return sendTooManyFailures(reply, retryAfter);
      if (request.headers.origin !== undefined && !isSameOrigin(request))
        throw new ForbiddenError("a login must come from the console's own origin");
      const verdict = await options.gate.verify(request.body.token);
      if (!verdict.ok) {
        await options.gate.recordFailure(request);
        request.log.info({ reason: verdict.reason }, 'operator token refused');
        return sendOperatorUnauthorized(reply, INVALID_TOKEN);
      }
      request.operatorToken = verdict.token;
      reply.header('set-cookie', `${OPERATOR_COOKIE}=${request.body.token}; HttpOnly; SameSite=Strict; Path=/`);
      return reply.code(204).send();
    },
  );

  app.delete(
    SESSION_PATH,
    {
      schema: {
        operationId: 'logOut',
        tags: ['operator'],
        summary: 'Log out of the console',
        description: 'Clears the console cookie. Needs no token: it only ends what the browser holds.',
        security: [],
        response: {
          204: adminNoContent('Logged out.', {
            'Set-Cookie': { type: 'string', description: 'The cookie, emptied and expired.' },
          }),
          ...adminErrors(),
        },
      },
    },
    async (_request, reply) => {
      reply.header('set-cookie', `${OPERATOR_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
      return reply.code(204).send();
    },
  );

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
      const account = await accounts.createAccount(name, { ...choice, naming: 'fields' });
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
      await accounts.setPlan(request.params.name, { ...request.body, naming: 'fields' });
      const summary = await accounts.describeAccount(request.params.name);
      const keys = { total: summary.keys, active: summary.activeKeys, lastUsedAt: summary.lastUsedAt };
      return reply.send(await present.account(summary.account, keys));
    },
  );

  app.get(
    `${ADMIN_PREFIX}/accounts/:name/keys`,
    {
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: "An account's keys",
        params: AccountParams,
        response: { 200: adminAnswer('Its keys, oldest first.', refs.Keys), ...adminErrors(400, 404) },
      },
    },
    async (request, reply) => {
      const now = clock.now();
      const keys = await accounts.listKeys(request.params.name);
      return reply.send({ keys: keys.map((key) => keyElement(key, now)) });
    },
  );

  app.post(
    `${ADMIN_PREFIX}/accounts/:name/keys`,
    {
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create a key',
        description: 'As `petstore key create`. The key is in this answer only. The body may be left out.',
        params: AccountParams,
        body: NewKeyBody,
        response: {
          201: adminAnswer('The new key, with its secret.', refs.CreatedKey),
          ...adminErrors(400, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { expiresIn } = request.body;
      const ms = expiresIn === undefined ? undefined : parseDuration(expiresIn);
      if (expiresIn !== undefined && ms === undefined) {
        throw new ValidationError(
          'invalid_body',
          `field 'expiresIn' must be a duration such as 90s, 15m, 12h, 30d or 2w (got ${JSON.stringify(expiresIn)})`,
        );
      }
      const created = await accounts.createKey(request.params.name, ms);
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
      const key = await accounts.revokeKey(request.params.id);
      options.keyVerifier.invalidateKey(key.id);
      return reply.send(keyElement(key, clock.now()));
    },
  );

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
      const key = await accounts.liftBan(request.params.keyId);
      return reply.send(keyElement(key, clock.now()));
    },
  );

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
        deprecated: [
          {
            operation: deprecated.operation,
            sunset: iso(deprecated.sunset),
            since: iso(deprecated.since),
            calls: deprecated.calls,
            lastCall: deprecated.lastCall === null ? null : iso(deprecated.lastCall),
            keys: deprecated.keys.map((key) => ({ id: key.keyId, calls: key.calls, lastCall: iso(key.lastCall) })),
          },
        ],
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
      return reply.send(historyOf(range, await usage.history(account.id, range)));
    },
  );

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
      return reply.send(historyOf(range, await usage.history(undefined, range)));
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

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

async function requireAccount(accounts: AccountService, name: string): Promise<AccountRecord> {
  const account = await accounts.findAccount(name);
  if (!account) throw new NotFoundError(`no account named '${name}'`);
  return account;
}

function keyState(key: ApiKeyRecord, now: number): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.bannedUntil !== null && key.bannedUntil > now) return 'banned';
  return 'active';
}

function keyElement(key: ApiKeyRecord, now: number): AdminKey {
  return {
    id: key.id,
    createdAt: iso(key.createdAt),
    expiresAt: isoOrNull(key.expiresAt),
    revokedAt: isoOrNull(key.revokedAt),
    lastUsedAt: isoOrNull(key.lastUsedAt),
    bannedUntil: key.bannedUntil !== null && key.bannedUntil > now ? iso(key.bannedUntil) : null,
    state: keyState(key, now),
  };
}

function historyOf(range: UsageRange, points: readonly UsagePoint[]): AdminHistory {
  return {
    from: iso(range.from),
    to: iso(range.to),
    granularity: range.granularity,
    points: points.map((point) => ({ ...point, at: iso(point.at) })),
  };
}

function totalsOf(points: readonly UsagePoint[]): { requests: number; refusals: number } {
  let requests = 0;
  let refusals = 0;
  for (const point of points) {
    requests += point.count;
    if (point.outcome === '429' || point.outcome === 'banned') refusals += point.count;
  }
  return { requests, refusals };
}

/** Accounts as the admin API shows them, with today's use read from the limiter. */
class AccountPresenter {
  private readonly options: AdminRouteOptions;

  constructor(options: AdminRouteOptions) {
    this.options = options;
  }

  async account(account: AccountRecord, keys: AccountKeyStats): Promise<AdminAccount> {
    const limits = limitsFor(account);
    return {
      name: account.name,
      plan: account.plan,
      limits,
      today: { used: await this.usedToday(account), limit: limits.perDay },
      keys: { total: keys.total, active: keys.active },
      lastUsedAt: isoOrNull(keys.lastUsedAt),
      createdAt: iso(account.createdAt),
    };
  }

  async detail(name: string): Promise<AdminAccountDetail> {
    const account = await requireAccount(this.options.accounts, name);
    const keys = await this.options.accounts.listKeys(name);
    const now = this.options.clock.now();
    const lastUsed = keys.reduce<number | null>(
      (latest, key) =>
        key.lastUsedAt !== null && (latest === null || key.lastUsedAt > latest) ? key.lastUsedAt : latest,
      null,
    );
    const limits = limitsFor(account);
    return {
      name: account.name,
      plan: account.plan,
      limits,
      today: { used: await this.usedToday(account), limit: limits.perDay },
      keys: keys.map((key) => keyElement(key, now)),
      lastUsedAt: isoOrNull(lastUsed),
      createdAt: iso(account.createdAt),
    };
  }

  /**
   * Requests counted in the account's current UTC day, peeked at without counting one: shared by
   * every instance with Redis, this instance's own without; null when Redis did not answer (its
   * stand-in, this process's memory, would give an invented number).
   */
  private async usedToday(account: AccountRecord): Promise<number | null> {
    const request = { ...accountQuota(account.id, limitsFor(account)), peek: true };
    try {
      const result = await this.options.limiter.consume(request, this.options.clock.now());
      if (result.fallback) return null;
      const day = result.windows.find((window) => window.name === 'day');
      return day === undefined ? null : day.limit - day.remaining;
    } catch {
      return null;
    }
  }
}

async function probe(check: ReadinessCheck, timeoutMs: number): Promise<{ name: string; ok: boolean }> {
  try {
    await settleWithin(check.check(), timeoutMs, () => new Error(`${check.name} did not answer in time`));
    return { name: check.name, ok: true };
  } catch {
    return { name: check.name, ok: false };
  }
}
