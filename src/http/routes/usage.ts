import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { settleWithin } from '../../deadline.ts';
import { StorageUnavailableError } from '../../errors.ts';
import type { WindowState } from '../../ratelimit/limiter.ts';
import type { Standing } from '../../ratelimit/rate-limit-policy.ts';
import type { KeyPrincipal } from '../../storage/store.ts';
import { PLANS } from '../../domain/plans.ts';
import { USAGE_OPERATIONS, USAGE_OUTCOMES } from '../../domain/usage.ts';
import type { DeprecatedUsage, UsagePoint, UsageRange, UsageService } from '../../usage/usage-service.ts';
import { errorResponses, headerRefs, RESPONSE_HEADERS, RATE_LIMIT_HEADERS } from '../openapi-responses.ts';

export interface UsageRouteOptions {
  readonly usage: UsageService;
  /** The storage timeout: GET /v1/usage waits half of it for the deprecated calls, then answers without them. */
  readonly storageTimeoutMs: number;
}

const UsageWindowSchema = (name: string) =>
  Type.Object(
    {
      limit: Type.Integer({ minimum: 0, description: `Requests allowed per ${name}.` }),
      remaining: Type.Integer({ minimum: 0, description: 'Requests left now; this call spent none.' }),
      reset: Type.Integer({ minimum: 0, description: 'Unix time, in seconds, when the window resets.' }),
    },
    { additionalProperties: false, description: `The UTC-${name} window of the account.` },
  );

const Instant = (description: string) => Type.String({ format: 'date-time', description });

const DeprecatedUsageSchema = Type.Object(
  {
    operation: Type.String({
      description: 'The `operationId` of the deprecated operation (today only `getPet`).',
      examples: ['getPet'],
    }),
    sunset: Instant('When the operation is removed; from then on it answers 410 `gone`.'),
    since: Instant(
      'The start of the period counted, 30 days ago; calls are counted per UTC hour, from the hour that holds it.',
    ),
    calls: Type.Integer({ minimum: 0, description: "The account's calls of the operation since `since`, all keys." }),
    lastCall: Type.Union([Instant('The latest of those calls.'), Type.Null()]),
    keys: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: "The key's non-secret id." }),
          calls: Type.Integer({ minimum: 1, description: 'Its calls of the operation since `since`.' }),
          lastCall: Instant('Its latest call of the operation.'),
        },
        { additionalProperties: false },
      ),
      { description: 'The keys that made those calls, most calls first.' },
    ),
  },
  {
    additionalProperties: false,
    description:
      'Calls the account made, with any of its keys, of an operation that is deprecated, in the last 30 days. ' +
      "Counts from other instances of the service appear within a few seconds; this instance's at once.",
  },
);

export const UsageSchema = Type.Object(
  {
    account: Type.Object(
      {
        name: Type.String({ description: "The account's unique name." }),
        plan: Type.Enum(PLANS, { type: 'string', description: 'The plan that sets the limits.' }),
      },
      { additionalProperties: false },
    ),
    windows: Type.Object(
      { minute: UsageWindowSchema('minute'), day: UsageWindowSchema('day') },
      { additionalProperties: false },
    ),
    key: Type.Object(
      {
        id: Type.String({ description: "The key's non-secret id, as `key list` shows it." }),
        expiresAt: Type.Union([Instant('When the key stops working.'), Type.Null()]),
        ban: Type.Union([
          Type.Object(
            {
              until: Instant('When the ban ends.'),
              retryAfter: Type.Integer({ minimum: 1, description: 'Seconds until the ban ends.' }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ]),
      },
      { additionalProperties: false, description: 'The key of this request.' },
    ),
    deprecated: Type.Union([
      Type.Array(DeprecatedUsageSchema, {
        description: 'One entry per deprecated operation, even when the account made no calls of it.',
      }),
      Type.Null({
        description:
          'The recorded calls cannot be read now (storage is unavailable); the rest of the answer does not need them.',
      }),
    ]),
  },
  {
    $id: 'Usage',
    additionalProperties: false,
    description: "Where the caller's account and key stand; reading it spends none of the account's quota.",
  },
);

export type Usage = Static<typeof UsageSchema>;

const UsageRef = Type.Unsafe<Usage>(Type.Ref('Usage'));

export const UsageHistorySchema = Type.Object(
  {
    from: Instant('Start of the first bucket (inclusive): `from` of the request, rounded down to its bucket.'),
    to: Instant('End of the last bucket (exclusive): `to` of the request, rounded up to its bucket.'),
    granularity: Type.Enum(['hour', 'day'], { type: 'string', description: 'The length of each bucket (UTC).' }),
    points: Type.Array(
      Type.Object(
        {
          at: Instant('Start of the bucket.'),
          operation: Type.Enum(USAGE_OPERATIONS, {
            type: 'string',
            description: 'The operation called; `usage` is `GET /usage` and `GET /usage/history`.',
          }),
          outcome: Type.Enum(USAGE_OUTCOMES, {
            type: 'string',
            description:
              'How it was answered: `2xx`, `4xx` (other than 429), `429` (`rate_limited`), `banned` ' +
              '(`key_banned`) or `5xx`.',
          }),
          count: Type.Integer({ minimum: 1, description: 'Requests in the bucket with that operation and outcome.' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Non-zero counts only, by `at`, then `operation`, then `outcome` (in alphabetical order): a bucket ' +
          'without requests has no point.',
      },
    ),
  },
  {
    $id: 'UsageHistory',
    additionalProperties: false,
    description: "The requests of the caller's account, all keys, per UTC hour or day.",
  },
);

export type UsageHistory = Static<typeof UsageHistorySchema>;

const UsageHistoryRef = Type.Unsafe<UsageHistory>(Type.Ref('UsageHistory'));

/** The schemas that the usage routes refer to by name (registered by plugins/schemas.ts). */
export const USAGE_SCHEMAS = [UsageSchema, UsageHistorySchema] as const;

const INSTANT_EXPECTATION = 'an ISO 8601 date or date-time with its offset, e.g. 2026-11-25 or 2026-11-25T10:00:00Z';

const UsageHistoryQuerySchema = Type.Object({
  from: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Start of the range, an ISO 8601 date or date-time with its offset (`Z` for UTC); rounded down to its ' +
        'bucket. Default: 24 hours before `to` (hour), 30 days before `to` (day).',
      'x-expectation': INSTANT_EXPECTATION,
    }),
  ),
  to: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'End of the range (exclusive), an ISO 8601 date or date-time with its offset; rounded up to its bucket. ' +
        'Default: the end of the current hour (or day). ' +
        'It must be after `from`, and at most 90 days after it.',
      'x-expectation': INSTANT_EXPECTATION,
    }),
  ),
  granularity: Type.Optional(
    Type.Enum(['hour', 'day'], {
      type: 'string',
      description: 'The length of each bucket: `hour` (the default) or `day`, in UTC.',
    }),
  ),
});

const HOUR_MS = 3_600_000;

export const USAGE_EXAMPLE: Usage = {
  account: { name: 'demo', plan: 'free' },
  windows: {
    minute: { limit: 60, remaining: 57, reset: 1795000020 },
    day: { limit: 1000, remaining: 940, reset: 1795046400 },
  },
  key: { id: 'key_3kq9x2m7w1', expiresAt: '2027-01-01T00:00:00.000Z', ban: null },
  deprecated: [
    {
      operation: 'getPet',
      sunset: '2030-12-05T00:00:00.000Z',
      since: '2026-10-27T11:00:00.000Z',
      calls: 42,
      lastCall: '2026-11-25T10:00:00.000Z',
      keys: [
        { id: 'key_3kq9x2m7w1', calls: 40, lastCall: '2026-11-25T10:00:00.000Z' },
        { id: 'key_8fz2p5c0qa', calls: 2, lastCall: '2026-11-20T16:42:10.000Z' },
      ],
    },
  ],
};

const EXAMPLE_DAY = Date.parse('2026-11-25T00:00:00.000Z');

export const USAGE_HISTORY_EXAMPLE: UsageHistory = {
  from: new Date(EXAMPLE_DAY).toISOString(),
  to: new Date(EXAMPLE_DAY + 24 * HOUR_MS).toISOString(),
  granularity: 'hour',
  points: [
    { at: new Date(EXAMPLE_DAY + 9 * HOUR_MS).toISOString(), operation: 'getPet', outcome: '2xx', count: 12 },
    { at: new Date(EXAMPLE_DAY + 9 * HOUR_MS).toISOString(), operation: 'listPets', outcome: '2xx', count: 118 },
    { at: new Date(EXAMPLE_DAY + 10 * HOUR_MS).toISOString(), operation: 'createPet', outcome: '2xx', count: 3 },
    { at: new Date(EXAMPLE_DAY + 10 * HOUR_MS).toISOString(), operation: 'createPet', outcome: '4xx', count: 1 },
    { at: new Date(EXAMPLE_DAY + 10 * HOUR_MS).toISOString(), operation: 'listPets', outcome: '429', count: 2 },
  ],
};

const COUNTING =
  'Counts from other instances of the service appear within a few seconds (`USAGE_FLUSH_MS`, 10 s by default); ' +
  "this instance's at once.";

/**
 * GET /v1/usage and GET /v1/usage/history: the account's standing, reported by the limits step
 * (src/http/limits-step.ts), and its recorded requests from the usage service. Neither is counted in
 * the account's windows (`reportsStanding`): both share the small limit of their own.
 */
export const usageRoutes: FastifyPluginAsync<UsageRouteOptions> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { usage } = options;
  const deprecatedWaitMs = Math.ceil(options.storageTimeoutMs / 2);

  app.get(
    '/v1/usage',
    {
      config: { usage: 'usage', reportsStanding: true },
      schema: {
        operationId: 'getUsage',
        tags: ['usage'],
        summary: "Your account's limits, your key's state and your deprecated calls",
        description:
          "The account's plan, both windows (limit, what is left now, reset), this key's expiry and ban, and the " +
          "account's calls of deprecated operations in the last 30 days, by key (`null` while storage is " +
          'unavailable: the rest answers without it). ' +
          "It is not counted in the account's windows: calling it spends no quota, and the rate-limit headers " +
          'are those a pets request would carry, without its spending. It answers while the key is banned ' +
          '(this is where the ban shows). It has a small limit of its own per account (default 30 per minute, ' +
          'shared with `GET /usage/history`); past it, 429 `rate_limited` with `Retry-After`, and the rate-limit ' +
          `headers describe that limit. ${COUNTING}`,
        response: {
          200: {
            description: 'The standing of the account and key.',
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: UsageRef, example: USAGE_EXAMPLE } },
          },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const { principal, standing } = standingOf(request);
      const deprecated = await readOrNull(usage.deprecated(principal.accountId), deprecatedWaitMs);
      return reply.send(usageOf(principal, standing, deprecated === null ? null : [deprecated]));
    },
  );

  app.get(
    '/v1/usage/history',
    {
      config: { usage: 'usage', reportsStanding: true },
      schema: {
        operationId: 'getUsageHistory',
        tags: ['usage'],
        summary: "Your account's requests per hour or day",
        description:
          "The requests of the caller's account, with any of its keys, per UTC hour or day, by operation and " +
          'outcome; only non-zero counts. Every request with a valid key is counted, whatever its answer ' +
          '(refusals included), and so is this one. The range is `[from, to)`, widened to whole buckets; it must ' +
          'not be empty and spans at most 90 days (2,160 hourly buckets). Unknown query parameters are ignored; ' +
          'a repeated one is refused. Like `GET /usage`, it spends no quota and shares its small limit. ' +
          COUNTING,
        querystring: UsageHistoryQuerySchema,
        response: {
          200: {
            description: "The account's requests in the range.",
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: UsageHistoryRef, example: USAGE_HISTORY_EXAMPLE } },
          },
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const { principal } = standingOf(request);
      const { from, to, granularity } = request.query;
      const range = usage.parseRange({ from, to, granularity });
      const points = await usage.history(principal.accountId, range);
      return reply.send(historyOf(range, points));
    },
  );
};

function standingOf(request: FastifyRequest): { principal: KeyPrincipal; standing: Standing } {
  const { principal, standing } = request;
  // Both are set before any handler runs; their absence is a wiring fault, answered as a 500.
  if (principal === undefined || standing === undefined)
    throw new Error(`${request.routeOptions.url ?? 'a usage route'} ran without its limits step`);
  return { principal, standing };
}

/**
 * The standing needs no storage, and is what a client needs most while storage is down (its windows,
 * its ban): the deprecated calls, which do, are left out rather than hold it up or turn it into a 503.
 */
async function readOrNull<T>(work: Promise<T>, waitMs: number): Promise<T | null> {
  try {
    return await settleWithin(work, waitMs, () => new StorageUnavailableError('the usage history did not answer'));
  } catch (error) {
    if (error instanceof StorageUnavailableError) return null;
    throw error;
  }
}

function usageOf(principal: KeyPrincipal, standing: Standing, deprecated: readonly DeprecatedUsage[] | null): Usage {
  const { ban } = standing;
  return {
    account: { name: principal.accountName, plan: principal.plan },
    windows: { minute: windowOf(standing, 'minute'), day: windowOf(standing, 'day') },
    key: {
      id: principal.keyId,
      expiresAt: principal.expiresAt === null ? null : isoOf(principal.expiresAt),
      ban: ban === null ? null : { until: isoOf(ban.until), retryAfter: ban.retryAfterSeconds },
    },
    deprecated: deprecated === null ? null : deprecated.map(deprecatedOf),
  };
}

function deprecatedOf(entry: DeprecatedUsage): NonNullable<Usage['deprecated']>[number] {
  return {
    operation: entry.operation,
    sunset: isoOf(entry.sunset),
    since: isoOf(entry.since),
    calls: entry.calls,
    lastCall: entry.lastCall === null ? null : isoOf(entry.lastCall),
    keys: entry.keys.map((key) => ({ id: key.keyId, calls: key.calls, lastCall: isoOf(key.lastCall) })),
  };
}

function historyOf(range: UsageRange, points: readonly UsagePoint[]): UsageHistory {
  return {
    from: isoOf(range.from),
    to: isoOf(range.to),
    granularity: range.granularity,
    points: points.map((point) => ({
      at: isoOf(point.at),
      operation: point.operation,
      outcome: point.outcome,
      count: point.count,
    })),
  };
}

function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

function windowOf(standing: Standing, name: string): Usage['windows']['minute'] {
  const window = standing.windows.find((candidate) => candidate.name === name) as WindowState;
  return { limit: window.limit, remaining: window.remaining, reset: Math.ceil(window.resetAt / 1000) };
}
