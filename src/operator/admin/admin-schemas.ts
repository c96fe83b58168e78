import { DEFAULT_KEY_LIMIT, MAX_KEY_LIMIT } from '../../domain/accounts.ts';
import { Type, type Static } from 'typebox';
import { KEY_SCOPES_EXPECTATION, KeyScopesSchema } from '../../auth/key-scopes-schema.ts';
import { ERROR_CODES } from '../../errors.ts';
import { ACCOUNT_NAME_PATTERN, ACCOUNT_NAME_RULE } from '../../domain/account-names.ts';
import { AUDIT_ACTIONS, AUDIT_TARGET_TYPES, AUDIT_VIAS } from '../../domain/audit.ts';
import {
  byWindow,
  listed,
  LIMIT_WINDOWS,
  type LimitWindows,
  type WindowField,
  type WindowLimits,
} from '../../domain/limit-windows.ts';
import { PLANS, type Plan } from '../../domain/plans.ts';
import { KEY_SCOPES, scopesExplained } from '../../domain/scopes.ts';
import { usageHistorySchema } from '../../usage/usage-schemas.ts';
import { AdminErrorSchema } from '../../http/error-schema.ts';

/**
 * The shapes of the admin API, written once: they validate requests, type the handlers and are the
 * components of the admin OpenAPI document (/admin/v1/openapi.json), which is apart from the
 * public one. Times are ISO 8601 strings.
 */

/** Codes of the admin API's Error bodies: the public API's, and two of its own. */
export const ADMIN_ERROR_CODES = ERROR_CODES;
export type AdminErrorCode = (typeof ADMIN_ERROR_CODES)[number];

/** A name as the documents' Markdown writes it. */
const code = (name: string): string => `\`${name}\``;
const Instant = (description: string) => Type.String({ format: 'date-time', description });
const MaybeInstant = (description: string) => Type.Union([Instant(description), Type.Null()]);
const Count = (description: string) => Type.Integer({ minimum: 0, description });

export type AdminError = Static<typeof AdminErrorSchema>;

export const KEY_STATES = ['active', 'revoked', 'expired', 'banned'] as const;
export type KeyState = (typeof KEY_STATES)[number];

/** Who created or revoked a key; null where it was not recorded (keys issued before it was). */
const KeyActorSchema = (description: string) =>
  Type.Union(
    [
      Type.Object(
        { kind: Type.Literal('operator_token'), id: Type.String({ description: "The operator token's id." }) },
        { additionalProperties: false, description: 'An operator token, through the admin API or the console.' },
      ),
      Type.Object(
        { kind: Type.Literal('cli'), user: Type.String({ description: 'The OS user who ran it.' }) },
        { additionalProperties: false, description: 'The `petstore` command-line tool.' },
      ),
      Type.Object(
        { kind: Type.Literal('key'), id: Type.String({ description: "The acting key's id." }) },
        { additionalProperties: false, description: "A key of the account, through the public API's /v1/keys." },
      ),
      Type.Null(),
    ],
    { description },
  );

export const KeySchema = Type.Object(
  {
    id: Type.String({ description: "The key's non-secret id." }),
    name: Type.Union([Type.String(), Type.Null()], {
      description: 'What its holder called it (keys created through /v1/keys); null: none.',
    }),
    createdBy: KeyActorSchema('Who created it; null: not recorded (issued before it was, or the demo key).'),
    revokedBy: KeyActorSchema('Who revoked it; null: not revoked, or not recorded.'),
    createdAt: Instant('When the key was created.'),
    expiresAt: MaybeInstant('When the key stops working; null: never.'),
    revokedAt: MaybeInstant('When the key was revoked; null: it was not.'),
    lastUsedAt: MaybeInstant('Its last use, written back every few seconds; null: never used.'),
    bannedUntil: MaybeInstant('When its ban ends, while it is banned; null otherwise.'),
    scopes: KeyScopesSchema(
      `What the key may do: ${scopesExplained(code)}. Each operation of the public API names the scope it ` +
        'needs in its `security`. Fixed when the key is issued.',
    ),
    state: Type.Enum(KEY_STATES, {
      type: 'string',
      description: 'revoked, else expired, else banned (while the ban lasts), else active.',
    }),
  },
  { $id: 'Key', additionalProperties: false, description: 'An API key, without its secret.' },
);
export type AdminKey = Static<typeof KeySchema>;
export const KeyRef = Type.Unsafe<AdminKey>(Type.Ref('Key'));

export const CreatedKeySchema = Type.Object(
  {
    key: Type.String({ description: 'The key itself: shown in this answer only, never again.' }),
    ...KeySchema.properties,
  },
  { $id: 'CreatedKey', additionalProperties: false, description: 'A new key, with its secret.' },
);
export type AdminCreatedKey = Static<typeof CreatedKeySchema>;

/** A limit per window, by its field (`perMinute`), in the table's order. */
const limitsSchema = (windows: LimitWindows) =>
  Type.Unsafe<WindowLimits>(
    Type.Object(
      byWindow(windows, 'field', (window) =>
        Type.Integer({ minimum: 1, description: `Requests per UTC ${window.name}.` }),
      ),
      {
        additionalProperties: false,
        description: "The effective limits: the plan's, or on enterprise the account's own.",
      },
    ),
  );

const TodaySchema = Type.Object(
  {
    used: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        "Requests counted in the account's current UTC-day window, read without counting one. With REDIS_URL " +
        'the count shared by every instance; without it, the count of the instance answering (all of them on ' +
        'a single instance). null when Redis did not answer.',
    }),
    limit: Type.Integer({ minimum: 1, description: 'The day limit.' }),
  },
  { additionalProperties: false },
);

const accountFields = (windows: LimitWindows) => ({
  name: Type.String({ description: "The account's unique name." }),
  plan: Type.Enum(PLANS, { type: 'string', description: 'The plan that sets the limits.' }),
  limits: limitsSchema(windows),
  today: TodaySchema,
  lastUsedAt: MaybeInstant('The latest last use of any of its keys; null: none used.'),
  createdAt: Instant('When the account was created.'),
  keyLimit: Type.Integer({
    minimum: 1,
    description: 'The most active keys the account may hold; its keys cannot create more through /v1/keys.',
  }),
});

const accountSchema = (windows: LimitWindows) =>
  Type.Object(
    {
      ...accountFields(windows),
      keys: Type.Object(
        {
          total: Count('Every key, revoked and expired ones included.'),
          active: Count('Keys neither revoked nor expired (a banned key counts: its ban ends).'),
        },
        { additionalProperties: false },
      ),
    },
    { $id: 'Account', additionalProperties: false, description: 'An account, its limits and its keys counted.' },
  );
/** The schemas of LIMIT_WINDOWS' table: what the handlers and the console are typed by. */
export const AccountSchema = accountSchema(LIMIT_WINDOWS);
export type AdminAccount = Static<typeof AccountSchema>;
export const AccountRef = Type.Unsafe<AdminAccount>(Type.Ref('Account'));

const accountDetailSchema = (windows: LimitWindows) =>
  Type.Object(
    { ...accountFields(windows), keys: Type.Array(KeyRef, { description: 'Its keys, oldest first.' }) },
    { $id: 'AccountDetail', additionalProperties: false, description: 'An account, its limits and its keys.' },
  );
export const AccountDetailSchema = accountDetailSchema(LIMIT_WINDOWS);
export type AdminAccountDetail = Static<typeof AccountDetailSchema>;

const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass it as `cursor`, with the same other parameters, for the next page; null on the last page.',
});

export const AccountsSchema = Type.Object(
  {
    accounts: Type.Array(AccountRef, { description: 'A page of accounts, oldest first.' }),
    nextCursor: NextCursor,
  },
  { $id: 'Accounts', additionalProperties: false },
);
export type AdminAccounts = Static<typeof AccountsSchema>;

export const KeysSchema = Type.Object(
  { keys: Type.Array(KeyRef, { description: 'A page of keys, oldest first.' }), nextCursor: NextCursor },
  { $id: 'Keys', additionalProperties: false },
);

export const BansSchema = Type.Object(
  {
    bans: Type.Array(
      Type.Object(
        {
          keyId: Type.String({ description: 'The banned key.' }),
          account: Type.String({ description: "The key's account." }),
          startedAt: Instant('When the ban began.'),
          until: Instant('When it ends, unless lifted.'),
        },
        { additionalProperties: false },
      ),
      { description: 'Bans in force, newest first, one per key.' },
    ),
  },
  { $id: 'Bans', additionalProperties: false },
);
export type AdminBans = Static<typeof BansSchema>;

export const StatusSchema = Type.Object(
  {
    storage: Type.Object(
      {
        backend: Type.Enum(['sqlite', 'postgres'] as const, { type: 'string' }),
        ready: Type.Boolean({ description: 'Whether storage answered its probe at `checkedAt`.' }),
      },
      { additionalProperties: false },
    ),
    redis: Type.Union(
      [
        Type.Object(
          { ready: Type.Boolean({ description: 'Whether Redis answered its probe at `checkedAt`.' }) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'null without REDIS_URL.' },
    ),
    accounts: Type.Union([Count('Accounts in storage.'), Type.Null()], {
      description: 'Accounts in storage; null while storage does not answer.',
    }),
    activeBans: Type.Union([Count('Bans in force.'), Type.Null()], {
      description: 'Bans in force; null while storage does not answer.',
    }),
    checkedAt: Instant(
      'When storage and Redis were last probed: now, or while one of them did not answer, up to a few seconds ' +
        'ago (they are probed every 5 s, and beside a request that finds the probe older than 1 s).',
    ),
    countsUnavailable: Type.Union([Type.String(), Type.Null()], {
      description: 'Why `accounts` and `activeBans` are null (storage did not answer); null when they are counted.',
    }),
  },
  { $id: 'Status', additionalProperties: false, description: 'The instance and what it depends on.' },
);
export type AdminStatus = Static<typeof StatusSchema>;

export const HistorySchema = usageHistorySchema({
  id: 'History',
  description: 'Requests per hour or day, operation and outcome.',
  from: 'Start of the first bucket (inclusive).',
  to: 'End of the last bucket (exclusive).',
  points: 'Non-zero counts only, sorted by time, operation and outcome.',
  at: 'Start of the hour or day.',
  operation: '`usage` is GET /v1/usage and GET /v1/usage/history.',
  outcome: '`429`: over a limit; `banned`: refused while the key was banned.',
  count: 'Requests with that operation and outcome in the bucket.',
});
export type AdminHistory = Static<typeof HistorySchema>;

const DeprecatedUsageSchema = Type.Object(
  {
    operation: Type.Literal('getPet', { description: 'The deprecated operation.' }),
    sunset: Instant('When it is removed.'),
    since: Instant('Start of the period counted: 30 days ago.'),
    calls: Count('Calls since then.'),
    lastCall: MaybeInstant('The latest call; null: none.'),
    keys: Type.Array(
      Type.Object(
        { id: Type.String(), calls: Count('Calls since then.'), lastCall: Instant('The latest call.') },
        { additionalProperties: false },
      ),
      { description: 'The keys that made them, most calls first.' },
    ),
  },
  { additionalProperties: false },
);

export const AccountUsageSchema = Type.Object(
  {
    account: Type.String(),
    last30Days: Type.Object(
      {
        requests: Count('Requests in the last 30 days, every outcome.'),
        refusals: Count('Of them, refused over a limit (429) or while banned.'),
      },
      { additionalProperties: false },
    ),
    deprecated: Type.Array(DeprecatedUsageSchema, {
      description: 'Calls to deprecated operations, one element per operation (today only getPet).',
    }),
  },
  { $id: 'AccountUsage', additionalProperties: false },
);
export type AdminAccountUsage = Static<typeof AccountUsageSchema>;

export const TopAccountsSchema = Type.Object(
  {
    by: Type.Enum(['requests', 'refusals'] as const, { type: 'string' }),
    from: Instant('Start of the range (inclusive).'),
    to: Instant('End of the range (exclusive).'),
    accounts: Type.Array(
      Type.Object(
        { account: Type.String(), requests: Count('Every outcome.'), refusals: Count('429 and banned.') },
        { additionalProperties: false },
      ),
      { description: 'Sorted by `by`, largest first.' },
    ),
  },
  { $id: 'TopAccounts', additionalProperties: false },
);
export type AdminTopAccounts = Static<typeof TopAccountsSchema>;

export const DeprecatedCallersSchema = Type.Object(
  {
    operation: Type.Literal('getPet'),
    sunset: Instant('When it is removed.'),
    since: Instant('Start of the period counted: 30 days ago.'),
    callers: Type.Array(
      Type.Object(
        {
          account: Type.String(),
          keyId: Type.String(),
          calls: Count('Calls since then.'),
          lastCall: Instant('The latest call.'),
        },
        { additionalProperties: false },
      ),
      { description: 'Every account and key that called it since then, most calls first.' },
    ),
  },
  { $id: 'DeprecatedCallers', additionalProperties: false },
);
export type AdminDeprecatedCallers = Static<typeof DeprecatedCallersSchema>;

export const OperatorTokenSchema = Type.Object(
  {
    id: Type.String({ description: "The token's non-secret id: its part after `pso_`." }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'The label it was created with; null: none.' }),
    createdAt: Instant('When the token was created.'),
    lastUsedAt: MaybeInstant('Its last use, written at most once a minute; null: never used.'),
    revokedAt: MaybeInstant('When the token was revoked; null: it was not.'),
  },
  {
    $id: 'OperatorToken',
    additionalProperties: false,
    description: 'An operator token, without its secret or the hash of it.',
  },
);
export type AdminOperatorToken = Static<typeof OperatorTokenSchema>;
export const OperatorTokenRef = Type.Unsafe<AdminOperatorToken>(Type.Ref('OperatorToken'));

export const OperatorTokensSchema = Type.Object(
  { tokens: Type.Array(OperatorTokenRef, { description: 'Every token, revoked ones included, oldest first.' }) },
  { $id: 'OperatorTokens', additionalProperties: false },
);
export type AdminOperatorTokens = Static<typeof OperatorTokensSchema>;

const AuditValuesSchema = Type.Union(
  [
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'Field by field; times are ISO 8601 strings.',
    }),
    Type.Null(),
  ],
  { description: 'The values of the fields the change set; null where there were none.' },
);

export const AuditEntrySchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: "The entry's number; with `at`, its place in the trail." }),
    at: Instant('When the change was made.'),
    actor: Type.Union(
      [
        Type.Object(
          {
            kind: Type.Literal('operator_token'),
            id: Type.String({ description: "The operator token's id (never the token)." }),
            name: Type.Union([Type.String(), Type.Null()], { description: "The token's label; null: none." }),
          },
          { additionalProperties: false, description: 'An operator token, through the admin API or the console.' },
        ),
        Type.Object(
          {
            kind: Type.Literal('cli'),
            user: Type.String({ description: 'The OS user who ran it.' }),
          },
          { additionalProperties: false, description: 'Through the `petstore` command-line tool.' },
        ),
        Type.Object(
          {
            kind: Type.Literal('key'),
            id: Type.String({ description: "The acting key's id (never the key)." }),
            account: Type.String({ description: "The acting key's account." }),
          },
          { additionalProperties: false, description: "An account holder's key, through the public API." },
        ),
      ],
      { description: 'Who made it.' },
    ),
    via: Type.Enum(AUDIT_VIAS, {
      type: 'string',
      description:
        'Through what: `console` (a request with the console session cookie), `api` (a request with ' +
        "`Authorization: Bearer`), `cli` (the command-line tool), `key` (an account holder's key, through the " +
        'public API). Entries from before this field was recorded: ' +
        "a token's are `api`, the CLI's `cli`.",
    }),
    action: Type.Enum(AUDIT_ACTIONS, { type: 'string', description: 'What was done.' }),
    target: Type.Object(
      {
        type: Type.Enum(AUDIT_TARGET_TYPES, { type: 'string' }),
        id: Type.String({ description: "An account's name, a key's id, an operator token's id." }),
      },
      { additionalProperties: false, description: 'What it was done to; a ban lifted is its key.' },
    ),
    before: AuditValuesSchema,
    after: AuditValuesSchema,
    requestId: Type.Union([Type.String(), Type.Null()], {
      description: 'The `X-Request-Id` of the admin API or public API request; null for the CLI.',
    }),
  },
  {
    $id: 'AuditEntry',
    additionalProperties: false,
    description: "One change an operator, or an account holder's key, made. It never holds a key, a token or a hash.",
  },
);
export type AdminAuditEntry = Static<typeof AuditEntrySchema>;

export const AuditTrailSchema = Type.Object(
  {
    entries: Type.Array(Type.Unsafe<AdminAuditEntry>(Type.Ref('AuditEntry')), { description: 'Newest first.' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'The `cursor` of the next page, with the same filters; null on the last page.',
    }),
  },
  { $id: 'AuditTrail', additionalProperties: false },
);
export type AdminAuditTrail = Static<typeof AuditTrailSchema>;

/** The components of the admin document, the accounts' limits those of the table the service runs on. */
export const adminSharedSchemas = (windows: LimitWindows): readonly object[] => [
  AdminErrorSchema,
  KeySchema,
  CreatedKeySchema,
  accountSchema(windows),
  accountDetailSchema(windows),
  AccountsSchema,
  KeysSchema,
  BansSchema,
  StatusSchema,
  HistorySchema,
  AccountUsageSchema,
  TopAccountsSchema,
  DeprecatedCallersSchema,
  OperatorTokenSchema,
  OperatorTokensSchema,
  AuditEntrySchema,
  AuditTrailSchema,
];

/** The component each name refers to, as a `$ref` with its static type. */
export const refs = {
  Error: Type.Unsafe<Static<typeof AdminErrorSchema>>(Type.Ref('Error')),
  CreatedKey: Type.Unsafe<AdminCreatedKey>(Type.Ref('CreatedKey')),
  AccountDetail: Type.Unsafe<AdminAccountDetail>(Type.Ref('AccountDetail')),
  Accounts: Type.Unsafe<Static<typeof AccountsSchema>>(Type.Ref('Accounts')),
  Keys: Type.Unsafe<Static<typeof KeysSchema>>(Type.Ref('Keys')),
  Bans: Type.Unsafe<AdminBans>(Type.Ref('Bans')),
  Status: Type.Unsafe<AdminStatus>(Type.Ref('Status')),
  History: Type.Unsafe<AdminHistory>(Type.Ref('History')),
  AccountUsage: Type.Unsafe<AdminAccountUsage>(Type.Ref('AccountUsage')),
  TopAccounts: Type.Unsafe<AdminTopAccounts>(Type.Ref('TopAccounts')),
  DeprecatedCallers: Type.Unsafe<AdminDeprecatedCallers>(Type.Ref('DeprecatedCallers')),
  OperatorTokens: Type.Unsafe<AdminOperatorTokens>(Type.Ref('OperatorTokens')),
  AuditTrail: Type.Unsafe<AdminAuditTrail>(Type.Ref('AuditTrail')),
};

// ---------------------------------------------------------------------------------------------
// Requests

const POSITIVE = 'a positive integer';

/** A plan and, on enterprise, the account's own limit in each window, by its field. */
const planFields = (windows: LimitWindows) => ({
  plan: Type.Enum(PLANS, {
    type: 'string',
    description: 'free, pro, business or enterprise.',
    'x-expectation': `one of ${PLANS.join(', ')}`,
  }),
  ...byWindow(windows, 'field', (window) => {
    const others = windows.filter((other) => other !== window).map((other) => other.field);
    const description = `Enterprise only, with ${listed(others)}.`;
    return Type.Optional(Type.Integer({ minimum: 1, description, 'x-expectation': POSITIVE }));
  }),
});

/** The limits a plan change or a new account may set, by field: every window of LIMIT_WINDOWS, and a given table's. */
type LimitChoice = { readonly [F in WindowField]?: number } & { readonly [field: string]: unknown };

export type AdminPlanChange = { readonly plan: Plan } & LimitChoice;
export type AdminNewAccount = { readonly name: string } & AdminPlanChange;

/** The bodies of the plan's operations, with the windows of the table the service runs on. */
export function planBodies(windows: LimitWindows) {
  return {
    newAccount: Type.Unsafe<AdminNewAccount>(
      Type.Object(
        { name: Type.String({ description: `${ACCOUNT_NAME_RULE}.` }), ...planFields(windows) },
        { additionalProperties: false },
      ),
    ),
    planChange: Type.Unsafe<AdminPlanChange>(Type.Object(planFields(windows), { additionalProperties: false })),
  };
}

/** The bodies of LIMIT_WINDOWS' table, for types. */
export const { newAccount: NewAccountBody, planChange: PlanChangeBody } = planBodies(LIMIT_WINDOWS);

export const NewKeyBody = Type.Object(
  {
    expiresIn: Type.Optional(
      Type.String({
        description: 'A duration: `90s`, `15m`, `12h`, `30d`, `2w`. Absent: the key never expires.',
        'x-expectation': 'a duration such as 90s, 15m, 12h, 30d or 2w',
      }),
    ),
    scopes: Type.Optional(
      KeyScopesSchema(
        `What the key may do, one or more of ${KEY_SCOPES.map(code).join(', ')}. Absent: every scope but ` +
          "`keys:manage`, those of later releases included; `keys:manage` only when named. A key's scopes " +
          'never change: to change them, create a new key and revoke the old one.',
        KEY_SCOPES_EXPECTATION,
      ),
    ),
  },
  { additionalProperties: false },
);

export const KeyLimitBody = Type.Object(
  {
    keyLimit: Type.Integer({
      minimum: 1,
      maximum: MAX_KEY_LIMIT,
      description:
        `The most active keys the account may hold, 1 to ${MAX_KEY_LIMIT}; ` + `new accounts get ${DEFAULT_KEY_LIMIT}.`,
      'x-expectation': `an integer from 1 to ${MAX_KEY_LIMIT}`,
    }),
  },
  { additionalProperties: false },
);

export const SessionBody = Type.Object(
  { token: Type.String({ description: 'An operator token (`pso_…`).', 'x-expectation': 'an operator token' }) },
  { additionalProperties: false },
);

// Names and ids in paths are checked before they reach storage (control characters, which PostgreSQL
// refuses as NUL, are refused for every parameter by http/validation.ts).
export const AccountParams = Type.Object({
  name: Type.String({
    pattern: ACCOUNT_NAME_PATTERN,
    description: "The account's name.",
    'x-expectation': `an account name: ${ACCOUNT_NAME_RULE}`,
  }),
});

const idParameter = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, description, 'x-expectation': 'an id of 1 to 64 characters' });

export const KeyIdParams = Type.Object({ id: idParameter("The key's id.") });
export const OperatorTokenIdParams = Type.Object({ id: idParameter("The operator token's id.") });
export const BanKeyParams = Type.Object({ keyId: idParameter("The banned key's id.") });

const RANGE_NOTE =
  'ISO 8601 date (`2026-06-01`) or date-time (`2026-06-01T12:00:00Z`), one that exists; ' +
  'the range, widened to whole hours or days, is at most 90 days.';

export const HistoryQuery = Type.Object({
  from: Type.Optional(
    Type.String({
      description:
        'Start; aligned down to its hour or day. Default: 24 hours (hour) or 30 days (day) before `to`. ' + RANGE_NOTE,
    }),
  ),
  to: Type.Optional(
    Type.String({
      description: `End, exclusive; aligned up. Default: the end of the current hour or day. ${RANGE_NOTE}`,
    }),
  ),
  granularity: Type.Optional(Type.String({ description: '`hour` (default) or `day`.' })),
});

export const TOP_LIMIT = { minimum: 1, maximum: 100, default: 10 } as const;

export const TopQuery = Type.Object({
  by: Type.Optional(
    Type.Enum(['requests', 'refusals'] as const, {
      type: 'string',
      description: '`requests` (default): every outcome; `refusals`: 429 and banned.',
      'x-expectation': 'requests or refusals',
    }),
  ),
  from: Type.Optional(Type.String({ description: `Start. Default: 24 hours before \`to\`. ${RANGE_NOTE}` })),
  to: Type.Optional(
    Type.String({
      description: `End, exclusive, aligned up to an hour. Default: the end of the current hour. ${RANGE_NOTE}`,
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      ...TOP_LIMIT,
      description: `Most accounts, ${TOP_LIMIT.minimum} to ${TOP_LIMIT.maximum}; ${TOP_LIMIT.default} when absent.`,
      'x-expectation': `an integer from ${TOP_LIMIT.minimum} to ${TOP_LIMIT.maximum}`,
    }),
  ),
});

/** The size of a page of an admin list: the bounds validate `limit`, and its description states them. */
export const ADMIN_PAGE_LIMIT = { minimum: 1, maximum: 200, default: 50 } as const;
const PAGE_LIMIT_RANGE = `${ADMIN_PAGE_LIMIT.minimum} to ${ADMIN_PAGE_LIMIT.maximum}`;

const pageFields = {
  limit: Type.Optional(
    Type.Integer({
      ...ADMIN_PAGE_LIMIT,
      description: `Most items, ${PAGE_LIMIT_RANGE}; ${ADMIN_PAGE_LIMIT.default} when absent.`,
      'x-expectation': `an integer from ${PAGE_LIMIT_RANGE}`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Opaque position: the `nextCursor` of the previous page, unchanged.',
      'x-expectation': 'the nextCursor of the previous page',
    }),
  ),
};

/** Account names are at most 64 characters: a longer search matches none. */
const SEARCH_MAX = 64;

export const AccountsQuery = Type.Object({
  q: Type.Optional(
    Type.String({
      maxLength: SEARCH_MAX,
      description:
        'Only accounts whose name contains this text, in any case (`acme` finds `Acme-EU`); `%` and `_` are ' +
        'matched as themselves. Empty or absent: every account.',
      'x-expectation': `at most ${SEARCH_MAX} characters`,
    }),
  ),
  ...pageFields,
});

export const KeysQuery = Type.Object(pageFields);

/** The request bodies as the console sends them. */
export type AdminNewKey = Static<typeof NewKeyBody>;

export const AUDIT_LIMIT = { minimum: 1, maximum: 200, default: 50 } as const;

export const AuditQuery = Type.Object({
  actor: Type.Optional(
    Type.String({
      description: "`cli`, `cli:<OS user>`, an operator token's id, or a key's id: only that one's changes.",
    }),
  ),
  target: Type.Optional(
    Type.String({
      description:
        'A type (`account`, `key`, `operator_token`) for every target of that type, or `<type>:<id>` for one: ' +
        '`account:acme`, `key:key_…`.',
    }),
  ),
  action: Type.Optional(
    Type.Enum(AUDIT_ACTIONS, {
      type: 'string',
      description: 'Only changes of this action.',
      'x-expectation': `one of ${AUDIT_ACTIONS.join(', ')}`,
    }),
  ),
  via: Type.Optional(
    Type.Enum(AUDIT_VIAS, {
      type: 'string',
      description: "Only changes made through the console, the admin API, the CLI or a holder's key.",
      'x-expectation': `one of ${AUDIT_VIAS.join(', ')}`,
    }),
  ),
  from: Type.Optional(
    Type.String({ description: 'Changes at or after this ISO 8601 date or date-time with its offset.' }),
  ),
  to: Type.Optional(Type.String({ description: 'Changes before this ISO 8601 date or date-time with its offset.' })),
  limit: Type.Optional(
    Type.Integer({
      ...AUDIT_LIMIT,
      description:
        `Most entries, ${AUDIT_LIMIT.minimum} to ${AUDIT_LIMIT.maximum}; ` + `${AUDIT_LIMIT.default} when absent.`,
      'x-expectation': `an integer from ${AUDIT_LIMIT.minimum} to ${AUDIT_LIMIT.maximum}`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      description: 'The `nextCursor` of the page before (same filters); absent: the newest entries.',
      'x-expectation': 'the nextCursor of the page before',
    }),
  ),
});
