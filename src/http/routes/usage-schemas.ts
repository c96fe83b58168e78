import { Type, type Static } from 'typebox';
import { KeyScopesSchema } from '../../auth/key-scopes-schema.ts';
import { byWindow, type ByWindow, type LimitWindows } from '../../domain/limit-windows.ts';
import { PLANS } from '../../domain/plans.ts';
import { HOUR_MS } from '../../domain/usage.ts';
import { usageHistorySchema } from '../../usage/usage-schemas.ts';

/**
 * The public usage API on the wire: what GET /v1/usage and GET /v1/usage/history answer and accept,
 * and the examples of the OpenAPI document.
 */

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

type UsageWindow = Static<ReturnType<typeof UsageWindowSchema>>;

/** A window per limit window, by its name (`minute`), in the table's order. */
const UsageWindowsSchema = (windows: LimitWindows) =>
  Type.Unsafe<ByWindow<'name', UsageWindow>>(
    Type.Object(
      byWindow(windows, 'name', (window) => UsageWindowSchema(window.name)),
      { additionalProperties: false },
    ),
  );

/** GET /v1/usage's answer, with the windows of the table the service runs on. */
const usageSchema = (windows: LimitWindows) =>
  Type.Object(
    {
      account: Type.Object(
        {
          name: Type.String({ description: "The account's unique name." }),
          plan: Type.Enum(PLANS, { type: 'string', description: 'The plan that sets the limits.' }),
        },
        { additionalProperties: false },
      ),
      windows: UsageWindowsSchema(windows),
      key: Type.Object(
        {
          id: Type.String({ description: "The key's non-secret id, as `key list` shows it." }),
          expiresAt: Type.Union([Instant('When the key stops working.'), Type.Null()]),
          scopes: KeyScopesSchema('What the key may do: each operation names the scope it needs. Fixed at issue.'),
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
            'The recorded calls cannot be read now (storage is unavailable); ' +
            'the rest of the answer does not need them.',
        }),
      ]),
    },
    {
      $id: 'Usage',
      additionalProperties: false,
      description: "Where the caller's account and key stand; reading it spends none of the account's quota.",
    },
  );

/** The answer's type: LIMIT_WINDOWS' windows, and any a given table adds. */
export type Usage = Static<ReturnType<typeof usageSchema>>;

export const UsageRef = Type.Unsafe<Usage>(Type.Ref('Usage'));

export const UsageHistorySchema = usageHistorySchema({
  id: 'UsageHistory',
  description: "The requests of the caller's account, all keys, per UTC hour or day.",
  from: 'Start of the first bucket (inclusive): `from` of the request, rounded down to its bucket.',
  to: 'End of the last bucket (exclusive): `to` of the request, rounded up to its bucket.',
  granularity: 'The length of each bucket (UTC).',
  points:
    'Non-zero counts only, by `at`, then `operation`, then `outcome` (in alphabetical order): a bucket ' +
    'without requests has no point.',
  at: 'Start of the bucket.',
  operation: 'The operation called; `usage` is `GET /usage` and `GET /usage/history`.',
  outcome:
    'How it was answered: `2xx`, `4xx` (other than 429), `429` (`rate_limited`), `banned` ' +
    '(`key_banned`) or `5xx`.',
  count: 'Requests in the bucket with that operation and outcome.',
});

export type UsageHistory = Static<typeof UsageHistorySchema>;

export const UsageHistoryRef = Type.Unsafe<UsageHistory>(Type.Ref('UsageHistory'));

/** The schemas that the usage routes refer to by name, with the windows of the table the service runs on. */
export function usageSchemas(windows: LimitWindows): readonly object[] {
  return [usageSchema(windows), UsageHistorySchema];
}

const INSTANT_EXPECTATION = 'an ISO 8601 date or date-time with its offset, e.g. 2026-11-25 or 2026-11-25T10:00:00Z';

export const UsageHistoryQuerySchema = Type.Object({
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
        'It must be after `from`; the range, widened to whole buckets, spans at most 90 days.',
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

export const USAGE_EXAMPLE: Usage = {
  account: { name: 'demo', plan: 'free' },
  windows: {
    minute: { limit: 60, remaining: 57, reset: 1795000020 },
    day: { limit: 1000, remaining: 940, reset: 1795046400 },
  },
  key: {
    id: 'key_3kq9x2m7w1',
    expiresAt: '2027-01-01T00:00:00.000Z',
    scopes: ['pets:read', 'pets:write', 'usage:read'],
    ban: null,
  },
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
