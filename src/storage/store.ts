/**
 * The storage seam. Each backend (sqlite-dialect.ts, postgres-dialect.ts) implements `Store` in one
 * file; services depend only on this interface. Times are milliseconds since the epoch.
 */
import type { AuditAction, AuditActor, AuditChange, AuditContext, AuditTargetType, AuditVia } from '../domain/audit.ts';
import type { NewPetRecord, PetRecord, PetStatus } from '../domain/pet.ts';
import type { Plan } from '../domain/plans.ts';
import type { KeyScope } from '../domain/scopes.ts';
import type { UsageOperation, UsageOutcome } from '../domain/usage.ts';

export interface PetListQuery {
  /** Only pets with an id strictly greater than this (0 for the first page). */
  readonly afterId: number;
  readonly limit: number;
  readonly status: PetStatus | undefined;
}

/** A page of accounts, oldest first (ascending id). */
export interface AccountPageQuery {
  /** Only accounts with an id strictly greater than this (0 for the first page). */
  readonly afterId: number;
  readonly limit: number;
  /**
   * Only accounts whose name contains this, ignoring the case of ASCII letters (names are ASCII);
   * `%`, `_` and `\` are matched as themselves. Undefined: every account.
   */
  readonly nameContains: string | undefined;
}

/** A page of an account's keys, oldest first (creation time, then id in byte order). */
export interface KeyPageQuery {
  readonly accountId: number;
  /** Only keys after this one in that order; undefined for the first page. */
  readonly after: { readonly createdAt: number; readonly id: string } | undefined;
  readonly limit: number;
}

export interface AccountRecord {
  readonly id: number;
  readonly name: string;
  readonly plan: Plan;
  /** Only set for enterprise accounts. */
  readonly perMinute: number | null;
  readonly perDay: number | null;
  readonly createdAt: number;
}

export interface NewAccount {
  readonly name: string;
  readonly plan: Plan;
  readonly perMinute: number | null;
  readonly perDay: number | null;
}

export interface ApiKeyRecord {
  /** Non-secret identifier shown in listings and used to revoke. */
  readonly id: string;
  readonly accountId: number;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
  /** What the key may do; fixed when it is issued. */
  readonly scopes: readonly KeyScope[];
  /** End of the key's active ban, if it is banned now or was until recently (see BanStore). */
  readonly bannedUntil: number | null;
}

export interface NewApiKey {
  readonly id: string;
  readonly accountId: number;
  /** SHA-256 of the plaintext key; the plaintext is never stored. */
  readonly hash: string;
  readonly expiresAt: number | null;
  /** What the key may do; absent, every scope, those of later releases included (EVERY_SCOPE_MARKER). */
  readonly scopes?: readonly KeyScope[];
}

/** What the hot path needs to know about a presented key, in one lookup. */
export interface KeyPrincipal {
  readonly keyId: string;
  readonly accountId: number;
  readonly accountName: string;
  readonly plan: Plan;
  readonly perMinute: number | null;
  readonly perDay: number | null;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  /** What the key may do: checked on every request from the cached principal. */
  readonly scopes: readonly KeyScope[];
  /** End of the latest unlifted ban; compare with now. */
  readonly bannedUntil: number | null;
}

/** A stored response to a POST carrying an Idempotency-Key. */
export interface IdempotentResponse {
  readonly statusCode: number;
  readonly body: string;
}

export interface IdempotencyScope {
  readonly accountId: number;
  readonly key: string;
}

/** A creation carrying an Idempotency-Key: the request's fingerprint and how its 201 is stored. */
export interface IdempotentCreate extends IdempotencyScope {
  readonly fingerprint: string;
  respond(pet: PetRecord): IdempotentResponse;
}

/**
 * What an idempotent creation found: nothing, so it created the pet and stored the response in the
 * same commit; or a completed earlier request with this key (whose fingerprint may differ).
 */
export type IdempotentOutcome =
  | { readonly state: 'created'; readonly pet: PetRecord }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly response: IdempotentResponse };

export interface PetStore {
  /** Inserts the pet durably; resolves only after the commit is on disk. */
  create(pet: NewPetRecord, now: number): Promise<PetRecord>;
  /**
   * One transaction under a lock on (account, key): replays a completed record, or inserts the pet
   * and its completed record together, so no claim outlives a failed request and a commit whose
   * answer was lost is found by the retry. A request still waiting for that lock when its wait
   * ends gets IdempotencyInFlightError.
   */
  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome>;
  get(id: number): Promise<PetRecord | undefined>;
  /** Ascending id, at most `limit` rows. */
  list(query: PetListQuery): Promise<PetRecord[]>;
}

export interface AccountStore {
  /** Throws ConflictError when the name is taken. */
  create(account: NewAccount, now: number): Promise<AccountRecord>;
  findByName(name: string): Promise<AccountRecord | undefined>;
  list(): Promise<AccountRecord[]>;
  /** At most `limit` accounts in ascending id order. */
  page(query: AccountPageQuery): Promise<AccountRecord[]>;
  /** Returns the updated account, or undefined when no account has that name. */
  setPlan(
    name: string,
    plan: Plan,
    perMinute: number | null,
    perDay: number | null,
  ): Promise<AccountRecord | undefined>;
  count(): Promise<number>;
  /**
   * What each account's keys add up to at `now`, by account id, in one query; accounts without keys
   * are absent. With `accountIds`, only those accounts'.
   */
  keyStats(now: number, accountIds?: readonly number[]): Promise<Map<number, AccountKeyStats>>;
}

/** What an account's keys add up to, for listings of many accounts in one query. */
export interface AccountKeyStats {
  readonly total: number;
  /** Neither revoked nor expired (a banned key still counts: its ban ends). */
  readonly active: number;
  /** The latest last-used time of any of its keys. */
  readonly lastUsedAt: number | null;
}

export interface KeyStore {
  create(key: NewApiKey, now: number): Promise<ApiKeyRecord>;
  findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  listForAccount(accountId: number): Promise<ApiKeyRecord[]>;
  /** At most `limit` of the account's keys, in the order of listForAccount. */
  pageForAccount(query: KeyPageQuery): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. Revoking twice keeps the first time. */
  revoke(id: string, now: number): Promise<boolean>;
  /**
   * Records last-used times, batched by the caller so the hot path never writes; a time never moves
   * back. A background write: resolves false, having written nothing, when storage was busy.
   */
  recordLastUsed(lastUsed: ReadonlyMap<string, number>, mode?: BackgroundWrite): Promise<boolean>;
}

/**
 * Background writes (last-used times, and any other batch a timer writes) never queue behind or in
 * front of requests, so no request ever waits for one.
 * - `if-idle` (the default; every interval): tried only if storage can take it at once. On SQLite,
 *   this process's writer must be free, or nothing is written and the call resolves false; another
 *   process holding the file's write lock refuses every write, and the call rejects at once with
 *   StorageUnavailableError; nothing waits. On PostgreSQL, a pooled connection must be free without
 *   queueing for it, or the call resolves false; the write then holds it for its statements only,
 *   bounded by the storage timeout like any call.
 * - `waiting` (the last flush at shutdown, when no request is left to hold up): waits as a request
 *   does, up to the storage timeout.
 * The caller keeps a batch that was not written (false, or StorageUnavailableError), merged with
 * newer values, for its next try.
 */
export type BackgroundWrite = 'if-idle' | 'waiting';

export interface IdempotencyStore {
  /** Deletes records created before `before`. */
  purge(before: number): Promise<number>;
}

export interface Store {
  readonly backend: 'sqlite' | 'postgres';
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  readonly operatorTokens: OperatorTokenStore;
  readonly operatorSessions: OperatorSessionStore;
  readonly usage: UsageStore;
  readonly audit: AuditStore;
  /**
   * Applies pending migrations; returns how many were applied. With `through`, a migration's name,
   * stops after that one: tests build a database as an earlier release left it.
   */
  migrate(through?: string): Promise<number>;
  /** Resolves when storage answers; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Temporary bans of keys that kept sending after a 429; kept in storage so the CLI can lift them. */
export interface BanStore {
  ban(keyId: string, startedAt: number, until: number): Promise<void>;
  /** Ends the key's active bans; false when it had none. */
  lift(keyId: string, now: number): Promise<boolean>;
  /** Bans of the key that started at or after `since`, lifted or not. */
  countSince(keyId: string, since: number): Promise<number>;
  /**
   * Of these bans (a key and the end its ban was recorded with), the keys whose ban was lifted: one
   * query, for the instances that hold bans to notice a lifting made by another process.
   */
  liftedAmong(bans: readonly RecordedBan[]): Promise<string[]>;
  /**
   * Bans in force at `now` (neither lifted nor over), one per key (its latest end), with the key's
   * account; newest first.
   */
  listActive(now: number): Promise<ActiveBan[]>;
}

export interface ActiveBan {
  readonly keyId: string;
  /** The name of the key's account. */
  readonly account: string;
  readonly startedAt: number;
  readonly until: number;
}

export interface RecordedBan {
  readonly keyId: string;
  readonly until: number;
}

/** A token of the operator listener (admin API and console). The secret is never stored. */
export interface OperatorTokenRecord {
  /** Non-secret identifier: the token's public part, shown in listings and used to revoke. */
  readonly id: string;
  /** A label chosen by whoever created it (whose token, what for). */
  readonly name: string | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
}

export interface NewOperatorToken {
  readonly id: string;
  /** SHA-256 of the token's secret part. */
  readonly hash: string;
  readonly name: string | null;
}

/** A token as verification needs it: with the hash its secret must match. */
export interface StoredOperatorToken extends OperatorTokenRecord {
  readonly hash: string;
}

export interface OperatorTokenStore {
  /** Throws ConflictError when the id is taken. */
  create(token: NewOperatorToken, now: number): Promise<OperatorTokenRecord>;
  findById(id: string): Promise<StoredOperatorToken | undefined>;
  /** Every token, revoked ones included, oldest first. */
  list(): Promise<OperatorTokenRecord[]>;
  /** Returns false when no such token exists. Revoking twice keeps the first time. */
  revoke(id: string, now: number): Promise<boolean>;
  /** A background write (see BackgroundWrite); a time never moves back. False when nothing was written. */
  recordLastUsed(id: string, at: number, mode?: BackgroundWrite): Promise<boolean>;
}

/** A console session; its id is never stored, only the hash it is found by. */
export interface NewOperatorSession {
  /** SHA-256 of the session id. */
  readonly hash: string;
  readonly tokenId: string;
}

/** A session as each use reads it: its times, and its token as it is now (revoked or not), in one query. */
export interface StoredOperatorSession {
  readonly startedAt: number;
  readonly lastSeenAt: number;
  readonly endedAt: number | null;
  readonly token: OperatorTokenRecord;
}

/** Sessions over before these times: ended, idle since, or started before (each bound alone suffices). */
export interface OperatorSessionCutoffs {
  readonly endedBefore: number;
  readonly lastSeenBefore: number;
  readonly startedBefore: number;
}

export interface OperatorSessionStore {
  /** Starts a session at `now` (its last use too). Throws ConflictError when the hash is taken. */
  start(session: NewOperatorSession, now: number): Promise<void>;
  find(hash: string): Promise<StoredOperatorSession | undefined>;
  /** Records a use of an open session; a time never moves back. False when nothing changed. */
  touch(hash: string, at: number): Promise<boolean>;
  /** Ends the session at `at`; ending twice keeps the first time. False when no open session has that hash. */
  end(hash: string, at: number): Promise<boolean>;
  /** Ends every open session of the token; how many it ended. */
  endForToken(tokenId: string, at: number): Promise<number>;
  /** Deletes the sessions over before the cutoffs; how many went. */
  purge(cutoffs: OperatorSessionCutoffs): Promise<number>;
}

/** Requests of one key under one operation and outcome in one UTC hour. */
export interface UsageCount {
  readonly accountId: number;
  readonly keyId: string;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  /** Start of the UTC hour, in milliseconds since the epoch. */
  readonly hour: number;
  readonly count: number;
  /** The latest request counted. */
  readonly lastAt: number;
}

/** Stored requests summed per bucket (an hour or a day) of `[from, to)`. */
export interface UsageSeriesQuery {
  /** Undefined: every account together. */
  readonly accountId: number | undefined;
  readonly from: number;
  readonly to: number;
  readonly bucketMs: number;
}

export interface UsageBucket {
  readonly at: number;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  readonly count: number;
}

export interface KeyCallsQuery {
  readonly operation: UsageOperation;
  /** Undefined: every account. */
  readonly accountId: number | undefined;
  /** Hours starting at or after this. */
  readonly since: number;
}

export interface StoredKeyCalls {
  readonly accountId: number;
  readonly accountName: string;
  readonly keyId: string;
  readonly calls: number;
  readonly lastAt: number;
}

export interface StoredAccountTotals {
  readonly accountId: number;
  readonly accountName: string;
  readonly requests: number;
  readonly refusals: number;
}

/** The usage history: hourly counts that every instance adds to. */
export interface UsageStore {
  /**
   * Adds the counts to the stored ones (an additive upsert), all in one transaction, as a background
   * write (BackgroundWrite): false, having written nothing, when storage was busy.
   */
  add(counts: readonly UsageCount[], mode: BackgroundWrite): Promise<boolean>;
  series(query: UsageSeriesQuery): Promise<UsageBucket[]>;
  /** Calls per key of one operation since an hour. */
  callsByKey(query: KeyCallsQuery): Promise<StoredKeyCalls[]>;
  /** Requests and refusals per account in `[from, to)`. */
  totalsByAccount(range: { readonly from: number; readonly to: number }): Promise<StoredAccountTotals[]>;
  /** Deletes the hours before `before`, as a background write; how many rows went, or false when busy. */
  purge(before: number): Promise<number | false>;
}

/** One entry of the audit trail, as stored: when, who and in which request, and what changed. */
export interface NewAuditEntry extends AuditContext, AuditChange {
  readonly at: number;
}

export interface AuditEntryRecord extends NewAuditEntry {
  /** Drawn by the database; with `at`, the entry's place in the trail. */
  readonly id: number;
}

/** Where a page of the trail ends: the next page holds the entries older than this one (by `at`, then `id`). */
export interface AuditPosition {
  readonly at: number;
  readonly id: number;
}

/** Entries matching every filter given, newest first (`at`, then `id`, descending). */
export interface AuditQuery {
  /** CLI entries (of one OS user, with `id`), or those of one operator token (its id). */
  readonly actor?: { readonly kind: AuditActor['kind']; readonly id?: string };
  /** Every target of a type, or the one with `id`. */
  readonly target?: { readonly type: AuditTargetType; readonly id?: string };
  readonly action?: AuditAction;
  /** Only the changes made through the console, the admin API or the CLI. */
  readonly via?: AuditVia;
  /** At or after. */
  readonly from?: number;
  /** Before. */
  readonly to?: number;
  /** Only the entries that come after this position in that order: the next page. */
  readonly olderThan?: AuditPosition;
  readonly limit: number;
}

/** The tables a change may write in the transaction of its audit entry. */
export type AuditedTables = Pick<Store, 'accounts' | 'keys' | 'bans' | 'operatorTokens'>;

export interface AuditedChange<T> {
  readonly result: T;
  /** The entry to store with the change; undefined when there is none to record. */
  readonly entry: NewAuditEntry | undefined;
}

/** The audit trail of operators' changes. */
export interface AuditStore {
  /**
   * Runs `change` in one transaction over `tables` and stores the entry it returns in that same
   * transaction: both commit, or neither does (a change that throws writes nothing). A row read
   * through `tables` stays locked until the commit, so the values read before a write are the ones
   * the write replaced.
   */
  change<T>(change: (tables: AuditedTables) => Promise<AuditedChange<T>>): Promise<T>;
  /** Stores an entry of a change made outside storage (a ban held by the rate limiter alone). */
  record(entry: NewAuditEntry): Promise<void>;
  list(query: AuditQuery): Promise<AuditEntryRecord[]>;
  /** Deletes the entries before `before`, as a background write; how many went, or false when busy. */
  purge(before: number): Promise<number | false>;
}
