import type { components } from './generated/openapi.ts';

type Schemas = components['schemas'];

/**
 * An int64: a number while it is a safe integer, a bigint beyond 2^53 so that no digit is lost. The generated types
 * give every int64 of the document this type (scripts/openapi-types.ts).
 */
export type Int64 = number | bigint;

export type PetStatus = NonNullable<Schemas['Pet']['status']>;

/** A pet as the service answers it; `id` and `categoryId` are Int64s and keep every digit. */
export type Pet = Schemas['Pet'];

/** The body of a creation; `categoryId` may be a number or a bigint and is sent with its exact digits. */
export type NewPet = Schemas['NewPet'];

/** The stable error codes of the service. */
export type ErrorCode = Schemas['Error']['code'];

/**
 * The answer of `GET /v1/usage`: the account, both windows (reset in Unix seconds), the key's state, and the
 * account's calls of deprecated operations in the last 30 days (times as ISO 8601 strings).
 */
export type Usage = Schemas['Usage'];

/** One window of a usage answer. */
export type UsageWindow = Usage['windows']['minute'];

/**
 * The account's calls of one deprecated operation in the last 30 days, and the keys that made them. A usage answer's
 * `deprecated` is null while the service cannot read them (its storage is unavailable).
 */
export type DeprecatedUsage = NonNullable<Usage['deprecated']>[number];

/** The answer of `GET /v1/usage/history`: the account's requests per bucket (times as ISO 8601 strings). */
export type UsageHistory = Schemas['UsageHistory'];

/** One non-zero count of a history: requests of one operation with one outcome in the bucket starting `at`. */
export type UsagePoint = UsageHistory['points'][number];

/** The length of a history's buckets. */
export type UsageGranularity = UsageHistory['granularity'];

/** A scope of a key: what it may do. */
export type KeyScope = Schemas['Key']['scopes'][number];

/** A key of the account as `GET /v1/keys` lists it (times as ISO 8601 strings); never its secret. */
export type Key = Schemas['Key'];

/** A new key: a Key with `key`, its secret, which the service shows in this answer only. */
export type CreatedKey = Schemas['CreatedKey'];

/** The body of `keys.create`: a name, scopes the calling key holds, and an optional lifetime in seconds. */
export type NewKey = Schemas['NewKey'];
