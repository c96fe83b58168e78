import type { ColumnType } from 'kysely';
import type { AuditAction, AuditActor, AuditTargetType, AuditVia } from '../domain/audit.ts';
import type { UsageOperation, UsageOutcome } from '../domain/usage.ts';
import type { Plan } from '../domain/plans.ts';
import type { PET_FIELDS, PetFieldName, PetRecord } from '../domain/pet.ts';

/**
 * The tables as Kysely sees them, one interface per table. Integer columns read differently per
 * backend: SQLite statements read them as exact bigints, PostgreSQL's driver returns `bigint`
 * columns as decimal strings and `integer` ones as numbers. The row mappers in sql-store.ts turn
 * all three into the record types, so `IntegerValue` is what every integer column selects as.
 */
export type IntegerValue = bigint | string | number;

type Integer = ColumnType<IntegerValue, number | bigint, number | bigint>;
type NullableInteger = ColumnType<IntegerValue | null, number | bigint | null, number | bigint | null>;
/** Drawn by the database (identity / autoincrement), never supplied by callers. */
type GeneratedId = ColumnType<IntegerValue, never, never>;

/** The column type of each kind of Pet field; an int64 is kept exact on both backends. */
type PetColumnType<N extends PetFieldName> = {
  readonly 'generated-id': GeneratedId;
  readonly text: string;
  readonly int64: Integer;
  readonly 'nullable-enum': PetRecord[N];
}[(typeof PET_FIELDS)[N]['kind']];

/** A column per field of the Pet (src/domain/pet.ts), under its column name. */
type PetColumns = { [N in PetFieldName as (typeof PET_FIELDS)[N]['column']]: PetColumnType<N> };

export interface PetsTable extends PetColumns {
  created_at: Integer;
}

export interface AccountsTable {
  id: GeneratedId;
  name: string;
  plan: Plan;
  per_minute: NullableInteger;
  per_day: NullableInteger;
  created_at: Integer;
  /** The most active keys the account may hold (DEFAULT_KEY_LIMIT until an operator sets it). */
  key_limit: ColumnType<IntegerValue, number | undefined, number>;
}

export interface ApiKeysTable {
  id: string;
  account_id: Integer;
  /** SHA-256 of the plaintext key. */
  hash: string;
  created_at: Integer;
  expires_at: NullableInteger;
  revoked_at: NullableInteger;
  last_used_at: NullableInteger;
  /** Space-separated scopes (src/domain/scopes.ts); every key issued before scopes existed holds all. */
  scopes: string;
  /** What its holder calls it; null for keys issued without one. */
  name: ColumnType<string | null, string | null | undefined, string | null>;
  /** Who created it and who revoked it, as `<kind>:<id>` (keyActorText); null where it was not kept. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  revoked_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IdempotencyKeysTable {
  account_id: Integer;
  key: string;
  fingerprint: string;
  created_at: Integer;
  status_code: NullableInteger;
  body: string | null;
}

export interface KeyBansTable {
  id: GeneratedId;
  key_id: string;
  started_at: Integer;
  until: Integer;
  lifted_at: NullableInteger;
}

/** Requests per account, key, operation, outcome and UTC hour; instances add to the counts. */
export interface UsageHoursTable {
  account_id: Integer;
  key_id: string;
  operation: UsageOperation;
  outcome: UsageOutcome;
  /** Start of the UTC hour, in milliseconds since the epoch. */
  hour: Integer;
  count: Integer;
  /** The latest request counted in the row. */
  last_at: Integer;
}

export interface OperatorTokensTable {
  /** The token's public part, also its id in listings. */
  id: string;
  /** SHA-256 of the token's secret part. */
  hash: string;
  name: string | null;
  created_at: Integer;
  revoked_at: NullableInteger;
  last_used_at: NullableInteger;
}

/** A console session, by the hash of its id; the id itself is only in the browser's cookie. */
export interface OperatorSessionsTable {
  /** SHA-256 of the session id. */
  hash: string;
  token_id: string;
  started_at: Integer;
  /** Written at most once a minute per session (OperatorSessionService). */
  last_seen_at: Integer;
  ended_at: NullableInteger;
}

/** The audit trail: one row per change an operator made. */
export interface AuditEntriesTable {
  id: GeneratedId;
  at: Integer;
  actor_kind: AuditActor['kind'];
  /** The token's id, the OS user of the CLI, or the key's id. */
  actor_id: string;
  /** The token's label, or the key's account; null for the CLI. */
  actor_name: string | null;
  /** Through what the change was made. */
  via: AuditVia;
  action: AuditAction;
  target_type: AuditTargetType;
  target_id: string;
  /** JSON objects of the values; null where there were none (before a creation). */
  before: string | null;
  after: string | null;
  /** The admin API request's id; null for the CLI. */
  request_id: string | null;
}

export interface DatabaseSchema {
  pets: PetsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  key_bans: KeyBansTable;
  usage_hours: UsageHoursTable;
  operator_tokens: OperatorTokensTable;
  operator_sessions: OperatorSessionsTable;
  audit_entries: AuditEntriesTable;
}
