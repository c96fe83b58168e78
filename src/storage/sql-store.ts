import {
  sql,
  type Compilable,
  type CompiledQuery,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
} from 'kysely';
import { settleWithin } from '../deadline.ts';
import { ConflictError, StorageUnavailableError } from '../errors.ts';
import type {
  AccountsTable,
  ApiKeysTable,
  AuditEntriesTable,
  DatabaseSchema,
  IdempotencyKeysTable,
  IntegerValue,
  KeyBansTable,
  OperatorTokensTable,
  PetsTable,
} from './database-schema.ts';
import { LIMIT_COLUMN_LIST, limitColumnsOf, storedLimitsOf } from './limit-columns.ts';
import { PET_COLUMNS, petRowOf, toPet, type PetRow } from './pet-columns.ts';
import type { AccountKeyStats, AccountPageQuery, AccountRecord, AccountStore, NewAccount } from '../domain/accounts.ts';
import type {
  AuditEntryRecord,
  AuditQuery,
  AuditStore,
  AuditedChange,
  AuditedTables,
  NewAuditEntry,
} from '../domain/audit.ts';
import type { BackgroundWrite } from '../domain/background-write.ts';
import type { ActiveBan, BanStore, RecordedBan } from '../domain/bans.ts';
import type { ApiKeyRecord, KeyActor, KeyPageQuery, KeyStore, NewApiKey } from '../domain/keys.ts';
import type {
  NewOperatorSession,
  OperatorSessionCutoffs,
  OperatorSessionStore,
  StoredOperatorSession,
} from '../domain/operator-sessions.ts';
import type {
  NewOperatorToken,
  OperatorTokenRecord,
  OperatorTokenStore,
  StoredOperatorToken,
} from '../domain/operator-tokens.ts';
import type {
  IdempotencyRecord,
  IdempotencyRecords,
  IdempotencyScope,
  IdempotencyStore,
  IdempotentCreate,
  IdempotentOutcome,
  IdempotentResponse,
  PetListQuery,
  PetStore,
} from '../domain/pet-store.ts';
import type { KeyPrincipal } from '../domain/principal.ts';
import type { Store } from '../domain/store.ts';
import type {
  KeyCallsQuery,
  StoredAccountTotals,
  StoredKeyCalls,
  UsageBucket,
  UsageCount,
  UsageSeriesQuery,
  UsageStore,
} from '../domain/usage-counts.ts';
import type { AuditActor, AuditValues, AuditVia } from '../domain/audit.ts';
import type { NewPetRecord, PetRecord, PetStatus } from '../domain/pet.ts';
import type { StoredLimits } from '../domain/limit-windows.ts';
import type { Plan } from '../domain/plans.ts';
import { scopesFromText, scopesToText } from '../domain/scopes.ts';
import { REFUSAL_OUTCOMES } from '../domain/usage.ts';

/**
 * The queries and row mappings both backends share. What truly differs lives in the dialect files
 * and reaches this one through `StoreDialect`: how pet creations are committed together, how
 * transactions lock, how driver errors are recognised, and how a read compiled once is run.
 */

/** A read Kysely compiled once: each call binds `parameters`, in the compiled order, and resolves with its rows. */
export type KeptRead<Row> = (parameters: readonly unknown[]) => Promise<Row[]>;

/** Commits pet creations, several to one commit where the backend allows it. */
export interface PetCommitter {
  create(pet: NewPetRecord, now: number): Promise<PetRecord>;
  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome>;
  /** Commits what is queued, so closing never drops an accepted creation. */
  drain(): Promise<void>;
}

export interface StoreDialect {
  readonly backend: Store['backend'];
  readonly db: Kysely<DatabaseSchema>;
  readonly pets: PetCommitter;
  isUniqueViolation(error: unknown): boolean;
  /**
   * Keeps a read compiled once (at store construction) for the calls that run it with their own
   * parameters: what the hottest reads cost is then the statement and the rows, not building and
   * compiling the query and going through Kysely's executor again on every call.
   */
  keepRead<Row>(query: CompiledQuery<Row>): KeptRead<Row>;
  /**
   * When set, every storage call (not migrate, ping or close) rejects with StorageUnavailableError
   * once this long has passed, however its steps (pool wait, connect, statements) add up.
   */
  readonly callTimeoutMs?: number;
  /**
   * Whether a read in the transaction of a change must lock the rows it reads until the commit
   * (`FOR UPDATE`), so that the values it reads are still those its write replaces: PostgreSQL's.
   * A SQLite transaction holds the database's one write lock from its start.
   */
  readonly locksRowsForChange?: boolean;
  /**
   * A background write (store.ts, BackgroundWrite): the statements in one transaction; false, with
   * nothing written and nothing waited for, when `if-idle` finds storage busy.
   */
  writeInBackground(statements: readonly CompiledQuery[], mode: BackgroundWrite): Promise<boolean>;
  migrate(through?: string): Promise<number>;
  /** Closes connections; called once. */
  destroy(): Promise<void>;
}

export type Database = Kysely<DatabaseSchema>;

// ---------------------------------------------------------------------------------------------
// Row mappings

const toNumber = (value: IntegerValue): number => Number(value);
const toNullableNumber = (value: IntegerValue | null): number | null => (value === null ? null : Number(value));

const toAccount = (row: Selectable<AccountsTable>): AccountRecord => ({
  id: toNumber(row.id),
  name: row.name,
  plan: row.plan,
  ...storedLimitsOf(row),
  createdAt: toNumber(row.created_at),
  keyLimit: toNumber(row.key_limit),
});

type KeyRow = Omit<Selectable<ApiKeysTable>, 'hash'> & {
  /** The end of the key's latest unlifted ban. */
  readonly banned_until: Selectable<KeyBansTable>['until'] | null;
};

/** A key's creator or revoker as stored: `<kind>:<id>`, the CLI's id its OS user. */
const keyActorText = (actor: KeyActor | null | undefined): string | null =>
  actor === null || actor === undefined ? null : `${actor.kind}:${actor.kind === 'cli' ? actor.user : actor.id}`;

const toKeyActor = (text: string | null): KeyActor | null => {
  const at = text?.indexOf(':') ?? -1;
  if (text === null || at < 0) return null;
  const [kind, id] = [text.slice(0, at), text.slice(at + 1)];
  if (kind === 'cli') return { kind, user: id };
  return kind === 'operator_token' || kind === 'key' ? { kind, id } : null;
};

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: toNumber(row.account_id),
  name: row.name,
  createdBy: toKeyActor(row.created_by),
  revokedBy: toKeyActor(row.revoked_by),
  createdAt: toNumber(row.created_at),
  expiresAt: toNullableNumber(row.expires_at),
  revokedAt: toNullableNumber(row.revoked_at),
  lastUsedAt: toNullableNumber(row.last_used_at),
  scopes: scopesFromText(row.scopes),
  bannedUntil: toNullableNumber(row.banned_until),
});

const toOperatorToken = (row: Selectable<OperatorTokensTable>): StoredOperatorToken => ({
  id: row.id,
  hash: row.hash,
  name: row.name,
  createdAt: toNumber(row.created_at),
  revokedAt: toNullableNumber(row.revoked_at),
  lastUsedAt: toNullableNumber(row.last_used_at),
});

/** The record without its hash: what listings and answers carry. */
const withoutHash = ({ id, name, createdAt, revokedAt, lastUsedAt }: StoredOperatorToken): OperatorTokenRecord => ({
  id,
  name,
  createdAt,
  revokedAt,
  lastUsedAt,
});

// ---------------------------------------------------------------------------------------------
// Statements shared by both dialects

/** The rows of new pets (petRowOf), in one statement; their ids come back in no documented order. */
export const insertPets = (db: Database, rows: readonly Insertable<PetsTable>[]) =>
  db.insertInto('pets').values(rows).returning('id');

export const insertPet = (db: Database, pet: NewPetRecord, now: number) => insertPets(db, [petRowOf(pet, now)]);

/** The record an earlier request with this key left, if any. */
export const findIdempotency = (db: Database, scope: IdempotencyScope) =>
  db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status_code', 'body'])
    .where('account_id', '=', scope.accountId)
    .where('key', '=', scope.key);

export type IdempotencyRow = Pick<Selectable<IdempotencyKeysTable>, 'fingerprint' | 'status_code' | 'body'>;

/**
 * A completed record replays; a row without a response (an unfinished claim written by an earlier
 * release of the service) is treated as absent and overwritten.
 */
export const completedOutcome = (row: IdempotencyRow | undefined): IdempotentOutcome | undefined =>
  row && row.status_code !== null && row.body !== null
    ? {
        state: 'completed',
        fingerprint: row.fingerprint,
        response: { statusCode: toNumber(row.status_code), body: row.body },
      }
    : undefined;

/** The completed record of a creation with an idempotency key. */
export const idempotencyRowOf = (
  request: IdempotentCreate,
  now: number,
  response: IdempotentResponse,
): Insertable<IdempotencyKeysTable> => ({
  account_id: request.accountId,
  key: request.key,
  fingerprint: request.fingerprint,
  created_at: now,
  status_code: response.statusCode,
  body: response.body,
});

/**
 * Stores completed records, in their creations' own transaction, overwriting an unfinished claim;
 * the rows must name distinct keys.
 */
export const storeIdempotencies = (db: Database, rows: readonly Insertable<IdempotencyKeysTable>[]) =>
  db
    .insertInto('idempotency_keys')
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['account_id', 'key']).doUpdateSet((eb) => ({
        fingerprint: eb.ref('excluded.fingerprint'),
        created_at: eb.ref('excluded.created_at'),
        status_code: eb.ref('excluded.status_code'),
        body: eb.ref('excluded.body'),
      })),
    );

export const storeIdempotency = (db: Database, request: IdempotentCreate, now: number, response: IdempotentResponse) =>
  storeIdempotencies(db, [idempotencyRowOf(request, now, response)]);

/** Ids are non-negative safe integers; anything else names no row (and must not reach a bigint cast). */
const isId = (id: number): boolean => Number.isSafeInteger(id) && id >= 0;

/**
 * `query` compiled, with `placeholders` standing where each call's values go: distinct values, in
 * the order the compiled SQL binds them, which this checks, so a reordered builder fails at start-up.
 */
function compiledWith<Row>(query: Compilable<Row>, placeholders: readonly unknown[]): CompiledQuery<Row> {
  const compiled = query.compile();
  const { parameters } = compiled;
  if (parameters.length !== placeholders.length || parameters.some((value, at) => value !== placeholders[at])) {
    throw new Error(`a kept read binds [${parameters.join(', ')}], not [${placeholders.join(', ')}]`);
  }
  return compiled;
}

// ---------------------------------------------------------------------------------------------
// Store

/** Bounds the wait for one storage call. */
type Within = <T>(work: Promise<T>) => Promise<T>;

const timedOut = (): StorageUnavailableError =>
  new StorageUnavailableError('storage is unavailable: it did not answer in time; retry later');

/**
 * With a call timeout, a call rejects with StorageUnavailableError once it has passed, however its
 * steps add up; without one (SQLite) the call's own lock waits are its deadline.
 */
function deadlineFor(timeoutMs: number | undefined): Within {
  if (timeoutMs === undefined) return (work) => work;
  return (work) => settleWithin(work, timeoutMs, timedOut);
}

export class SqlStore implements Store {
  readonly backend: Store['backend'];
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  readonly operatorTokens: OperatorTokenStore;
  readonly operatorSessions: OperatorSessionStore;
  readonly usage: UsageStore;
  readonly audit: AuditStore;
  private readonly dialect: StoreDialect;
  private closing: Promise<void> | undefined;

  constructor(dialect: StoreDialect) {
    this.dialect = dialect;
    this.backend = dialect.backend;
    const within = deadlineFor(dialect.callTimeoutMs);
    this.pets = new SqlPets(dialect, within);
    this.accounts = new SqlAccounts(dialect, within);
    this.keys = new SqlKeys(dialect, within);
    this.idempotency = new SqlIdempotency(dialect, within);
    this.bans = new SqlBans(dialect, within);
    this.operatorTokens = new SqlOperatorTokens(dialect, within);
    this.operatorSessions = new SqlOperatorSessions(dialect, within);
    this.usage = new SqlUsage(dialect, within);
    this.audit = new SqlAudit(dialect, within);
  }

  migrate(through?: string): Promise<number> {
    return this.dialect.migrate(through);
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.dialect.db);
  }

  close(): Promise<void> {
    this.closing ??= this.dialect.pets.drain().finally(() => this.dialect.destroy());
    return this.closing;
  }
}

/** The tables whose rows are kept for a time, and the column of each that dates a row. */
const EXPIRING = { usage_hours: 'hour', audit_entries: 'at' } as const;

/** What every table's store holds: the dialect, its database, and the deadline of a call. */
abstract class SqlTable {
  protected readonly dialect: StoreDialect;
  protected readonly db: Database;
  protected readonly within: Within;
  /** Set in the transaction of a change (AuditStore.change) where the backend locks rows read there. */
  private readonly locksReads: boolean;

  constructor(dialect: StoreDialect, within: Within, inChange = false) {
    this.dialect = dialect;
    this.db = dialect.db;
    this.within = within;
    this.locksReads = inChange && dialect.locksRowsForChange === true;
  }

  /**
   * Deletes the rows of a table kept for a time (usage hours, audit entries) from before `before`,
   * as a background write; counted first, so that nothing is written while nothing has expired.
   * How many went, or false when storage was busy.
   */
  protected async purgeExpired(table: keyof typeof EXPIRING, before: number): Promise<number | false> {
    const time = sql.ref(EXPIRING[table]);
    const count = this.db
      .selectFrom(table)
      .select(sql<IntegerValue>`count(*)`.as('count'))
      .where(time, '<', before);
    const expired = toNumber((await this.within(count.executeTakeFirstOrThrow())).count);
    if (expired === 0) return 0;
    const purge = this.db.deleteFrom(table).where(time, '<', before).compile();
    return (await this.within(this.dialect.writeInBackground([purge], 'if-idle'))) ? expired : false;
  }

  /** The read as it is, or locking its rows until the commit in the transaction of a change. */
  protected forChange<Query extends { forUpdate(): Query }>(query: Query): Query {
    return this.locksReads ? query.forUpdate() : query;
  }
}

/** The placeholders of the pets reads: distinct, so that compiledWith can tell where each goes. */
const ID = -1;
const AFTER_ID = -2;
const LIMIT = -3;
const STATUS: PetStatus = 'available';

class SqlPets extends SqlTable implements PetStore {
  // The hot reads, compiled once here; each call only binds its values (StoreDialect.keepRead).
  private readonly byId: KeptRead<PetRow>;
  private readonly page: KeptRead<PetRow>;
  private readonly pageOfStatus: KeptRead<PetRow>;

  constructor(dialect: StoreDialect, within: Within) {
    super(dialect, within);
    const pets = this.db.selectFrom('pets').select(PET_COLUMNS);
    this.byId = dialect.keepRead(compiledWith(pets.where('id', '=', ID), [ID]));
    const after = pets.where('id', '>', AFTER_ID);
    this.page = dialect.keepRead(compiledWith(after.orderBy('id').limit(LIMIT), [AFTER_ID, LIMIT]));
    const ofStatus = after.where('status', '=', STATUS).orderBy('id').limit(LIMIT);
    this.pageOfStatus = dialect.keepRead(compiledWith(ofStatus, [AFTER_ID, STATUS, LIMIT]));
  }

  create(pet: NewPetRecord, now: number): Promise<PetRecord> {
    return this.within(this.dialect.pets.create(pet, now));
  }

  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return this.within(this.dialect.pets.createIdempotent(pet, now, request));
  }

  async get(id: number): Promise<PetRecord | undefined> {
    if (!isId(id)) return undefined;
    const [row] = await this.within(this.byId([id]));
    return row ? toPet(row) : undefined;
  }

  async list(query: PetListQuery): Promise<PetRecord[]> {
    // Ids are safe integers: past 2^53 there is nothing to list, and fractions compare like their floor.
    if (query.afterId >= Number.MAX_SAFE_INTEGER || query.limit <= 0) return [];
    const afterId = Math.max(0, Math.floor(query.afterId) || 0);
    // Bound, not written into the SQL: one kept statement serves every page size.
    const limit = Math.trunc(query.limit);
    const rows =
      query.status === undefined ? this.page([afterId, limit]) : this.pageOfStatus([afterId, query.status, limit]);
    return (await this.within(rows)).map(toPet);
  }
}

class SqlAccounts extends SqlTable implements AccountStore {
  async create(account: NewAccount, now: number): Promise<AccountRecord> {
    const insert = this.db
      .insertInto('accounts')
      .values({
        name: account.name,
        plan: account.plan,
        ...limitColumnsOf(account),
        created_at: now,
      })
      .returningAll();
    try {
      return toAccount(await this.within(insert.executeTakeFirstOrThrow()));
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) {
        throw new ConflictError(`an account named '${account.name}' already exists`);
      }
      throw error;
    }
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const select = this.forChange(this.db.selectFrom('accounts').selectAll().where('name', '=', name));
    const row = await this.within(select.executeTakeFirst());
    return row ? toAccount(row) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.within(this.db.selectFrom('accounts').selectAll().orderBy('id').execute())).map(toAccount);
  }

  async page(query: AccountPageQuery): Promise<AccountRecord[]> {
    if (query.afterId >= Number.MAX_SAFE_INTEGER || query.limit <= 0) return [];
    const { nameContains } = query;
    const after = this.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '>', Math.max(0, Math.floor(query.afterId) || 0));
    const found =
      nameContains === undefined || nameContains === ''
        ? after
        : after.where(sql<boolean>`lower(${sql.ref('name')}) like ${containsPattern(nameContains)} escape '\\'`);
    const select = found.orderBy('id').limit(Math.trunc(query.limit));
    return (await this.within(select.execute())).map(toAccount);
  }

  async setPlan(name: string, plan: Plan, limits: StoredLimits): Promise<AccountRecord | undefined> {
    const update = this.db
      .updateTable('accounts')
      .set({ plan, ...limitColumnsOf(limits) })
      .where('name', '=', name)
      .returningAll();
    const row = await this.within(update.executeTakeFirst());
    return row ? toAccount(row) : undefined;
  }

  async setKeyLimit(name: string, keyLimit: number): Promise<AccountRecord | undefined> {
    const update = this.db.updateTable('accounts').set({ key_limit: keyLimit }).where('name', '=', name).returningAll();
    const row = await this.within(update.executeTakeFirst());
    return row ? toAccount(row) : undefined;
  }

  async count(): Promise<number> {
    const count = this.db.selectFrom('accounts').select((eb) => eb.fn.countAll<IntegerValue>().as('count'));
    return toNumber((await this.within(count.executeTakeFirstOrThrow())).count);
  }

  async keyStats(now: number, accountIds?: readonly number[]): Promise<Map<number, AccountKeyStats>> {
    if (accountIds !== undefined && accountIds.length === 0) return new Map();
    const unexpired = sql`(${sql.ref('expires_at')} is null or ${sql.ref('expires_at')} > ${now})`;
    const usable = sql`${sql.ref('revoked_at')} is null and ${unexpired}`;
    const active = sql<IntegerValue>`sum(case when ${usable} then 1 else 0 end)`;
    const select = this.db
      .selectFrom('api_keys')
      .select((eb) => [
        'account_id',
        eb.fn.countAll<IntegerValue>().as('total'),
        active.as('active'),
        eb.fn.max('last_used_at').as('last_used_at'),
      ])
      .$if(accountIds !== undefined, (some) => some.where('account_id', 'in', accountIds ?? []))
      .groupBy('account_id');
    const rows = await this.within(select.execute());
    return new Map(
      rows.map((row) => [
        toNumber(row.account_id),
        {
          total: toNumber(row.total),
          // SUM over no rows is NULL; a group has at least one row, but the type allows it.
          active: toNumber(row.active ?? 0),
          lastUsedAt: toNullableNumber(row.last_used_at),
        },
      ]),
    );
  }
}

const KEY_COLUMNS = [
  'k.id',
  'k.account_id',
  'k.created_at',
  'k.expires_at',
  'k.revoked_at',
  'k.last_used_at',
  'k.scopes',
  'k.name',
  'k.created_by',
  'k.revoked_by',
] as const;

/** The end of the key's latest unlifted ban. */
const bannedUntil = (eb: ExpressionBuilder<DatabaseSchema & { k: DatabaseSchema['api_keys'] }, 'k'>) =>
  eb
    .selectFrom('key_bans as b')
    .select((inner) => inner.fn.max('b.until').as('until'))
    .whereRef('b.key_id', '=', 'k.id')
    .where('b.lifted_at', 'is', null)
    .as('banned_until');

/** Byte order, as SQLite compares text and as PostgreSQL does with COLLATE "C". */
const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A LIKE pattern (with `escape '\'`) for names containing `text`, lower-cased as the column is:
 * ASCII letters only, as names are ASCII and SQLite's lower() folds nothing else, so that both
 * backends match the same names. LIKE's wildcards in `text` are matched as themselves.
 */
function containsPattern(text: string): string {
  const lowered = text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  return `%${lowered.replace(/[\\%_]/g, '\\$&')}%`;
}

class SqlKeys extends SqlTable implements KeyStore {
  async create(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    const insert = this.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        account_id: key.accountId,
        hash: key.hash,
        created_at: now,
        expires_at: key.expiresAt,
        scopes: scopesToText(key.scopes),
        name: key.name ?? null,
        created_by: keyActorText(key.createdBy),
      })
      .returning([
        'id',
        'account_id',
        'created_at',
        'expires_at',
        'revoked_at',
        'last_used_at',
        'scopes',
        'name',
        'created_by',
        'revoked_by',
      ]);
    try {
      return toKey({ ...(await this.within(insert.executeTakeFirstOrThrow())), banned_until: null });
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) throw new ConflictError(`a key with id '${key.id}' already exists`);
      throw error;
    }
  }

  async findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
    const select = this.db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .select([
        'k.id as key_id',
        'k.account_id',
        'a.name as account_name',
        'a.plan',
        ...LIMIT_COLUMN_LIST.map((column) => `a.${column}` as const),
        'k.expires_at',
        'k.revoked_at',
        'k.scopes',
        bannedUntil,
      ])
      .where('k.hash', '=', hash);
    const row = await this.within(select.executeTakeFirst());
    if (!row) return undefined;
    return {
      keyId: row.key_id,
      accountId: toNumber(row.account_id),
      accountName: row.account_name,
      plan: row.plan,
      ...storedLimitsOf(row),
      expiresAt: toNullableNumber(row.expires_at),
      revokedAt: toNullableNumber(row.revoked_at),
      scopes: scopesFromText(row.scopes),
      bannedUntil: toNullableNumber(row.banned_until),
    };
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const select = this.forChange(
      this.db
        .selectFrom('api_keys as k')
        .select([...KEY_COLUMNS, bannedUntil])
        .where('k.id', '=', id),
    );
    const row = await this.within(select.executeTakeFirst());
    return row ? toKey(row) : undefined;
  }

  async listForAccount(accountId: number): Promise<ApiKeyRecord[]> {
    if (!isId(accountId)) return [];
    const select = this.db
      .selectFrom('api_keys as k')
      .select([...KEY_COLUMNS, bannedUntil])
      .where('k.account_id', '=', accountId);
    const rows = await this.within(select.execute());
    // Sorted here rather than in SQL: PostgreSQL would order ids by the database's collation.
    return rows.map(toKey).sort((a, b) => a.createdAt - b.createdAt || byBytes(a.id, b.id));
  }

  async pageForAccount(query: KeyPageQuery): Promise<ApiKeyRecord[]> {
    if (!isId(query.accountId) || query.limit <= 0) return [];
    const { after } = query;
    // The byte order of listForAccount on both backends, whatever PostgreSQL's collation.
    const id = this.dialect.backend === 'postgres' ? sql<string>`${sql.ref('k.id')} collate "C"` : sql.ref('k.id');
    const keys = this.db
      .selectFrom('api_keys as k')
      .select([...KEY_COLUMNS, bannedUntil])
      .where('k.account_id', '=', query.accountId);
    const later =
      after === undefined
        ? keys
        : keys.where((eb) =>
            eb.or([
              eb('k.created_at', '>', after.createdAt),
              eb.and([eb('k.created_at', '=', after.createdAt), eb(id, '>', after.id)]),
            ]),
          );
    const select = later.orderBy('k.created_at').orderBy(id).limit(Math.trunc(query.limit));
    return (await this.within(select.execute())).map(toKey);
  }

  async revoke(id: string, now: number, by?: KeyActor | null): Promise<boolean> {
    // Both read the row as it was: the first revocation's time and revoker are kept.
    const firstTime = sql<boolean>`${sql.ref('revoked_at')} is null`;
    const update = this.db
      .updateTable('api_keys')
      .set({
        revoked_at: sql<number>`coalesce(${sql.ref('revoked_at')}, ${now})`,
        revoked_by: sql<
          string | null
        >`case when ${firstTime} then ${keyActorText(by)} else ${sql.ref('revoked_by')} end`,
      })
      .where('id', '=', id);
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  async expireBy(id: string, at: number): Promise<boolean> {
    const later = sql<boolean>`${sql.ref('expires_at')} is null or ${sql.ref('expires_at')} > ${at}`;
    const update = this.db
      .updateTable('api_keys')
      .set({ expires_at: sql<number>`case when ${later} then ${at} else ${sql.ref('expires_at')} end` })
      .where('id', '=', id);
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  async countActive(accountId: number, now: number): Promise<number> {
    if (!isId(accountId)) return 0;
    const count = this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<IntegerValue>().as('count'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    return toNumber((await this.within(count.executeTakeFirstOrThrow())).count);
  }

  /**
   * One transaction for the whole batch, as a background write. Keys are updated in id order, so two
   * instances flushing overlapping batches lock rows in the same order and cannot deadlock; a time
   * never moves back.
   */
  async recordLastUsed(lastUsed: ReadonlyMap<string, number>, mode: BackgroundWrite = 'if-idle'): Promise<boolean> {
    if (lastUsed.size === 0) return true;
    const updates = [...lastUsed]
      .sort(([a], [b]) => byBytes(a, b))
      .map(([id, at]) =>
        this.db
          .updateTable('api_keys')
          .set({ last_used_at: Math.trunc(at) })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', Math.trunc(at))]))
          .compile(),
      );
    return this.within(this.dialect.writeInBackground(updates, mode));
  }
}

class SqlIdempotency extends SqlTable implements IdempotencyStore, IdempotencyRecords {
  async find(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const select = this.db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'created_at', 'status_code', 'body'])
      .where('account_id', '=', scope.accountId)
      .where('key', '=', scope.key);
    const row = await this.within(select.executeTakeFirst());
    // A row without a response is an unfinished claim of an earlier release: as good as none.
    if (row === undefined || row.status_code === null || row.body === null) return undefined;
    const response = { statusCode: toNumber(row.status_code), body: row.body };
    return { fingerprint: row.fingerprint, createdAt: toNumber(row.created_at), response };
  }

  async store(scope: IdempotencyScope, record: IdempotencyRecord): Promise<void> {
    const row = {
      account_id: scope.accountId,
      key: scope.key,
      fingerprint: record.fingerprint,
      created_at: record.createdAt,
      status_code: record.response.statusCode,
      body: record.response.body,
    };
    await this.within(storeIdempotencies(this.db, [row]).execute());
  }

  async purge(before: number): Promise<number> {
    const purge = this.db.deleteFrom('idempotency_keys').where('created_at', '<', before);
    return Number((await this.within(purge.executeTakeFirst())).numDeletedRows);
  }
}

class SqlBans extends SqlTable implements BanStore {
  async ban(keyId: string, startedAt: number, until: number): Promise<void> {
    await this.within(this.db.insertInto('key_bans').values({ key_id: keyId, started_at: startedAt, until }).execute());
  }

  async lift(keyId: string, now: number): Promise<boolean> {
    const update = this.db
      .updateTable('key_bans')
      .set({ lifted_at: now })
      .where('key_id', '=', keyId)
      .where('lifted_at', 'is', null)
      .where('until', '>', now);
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  async countSince(keyId: string, since: number): Promise<number> {
    const count = this.db
      .selectFrom('key_bans')
      .select((eb) => eb.fn.countAll<IntegerValue>().as('count'))
      .where('key_id', '=', keyId)
      .where('started_at', '>=', since);
    return toNumber((await this.within(count.executeTakeFirstOrThrow())).count);
  }

  async liftedAmong(bans: readonly RecordedBan[]): Promise<string[]> {
    if (bans.length === 0) return [];
    const lifted = this.db
      .selectFrom('key_bans')
      .select('key_id')
      .where('lifted_at', 'is not', null)
      .where((eb) => eb.or(bans.map((ban) => eb.and([eb('key_id', '=', ban.keyId), eb('until', '=', ban.until)]))));
    const rows = await this.within(lifted.execute());
    return [...new Set(rows.map((row) => row.key_id))];
  }

  async listActive(now: number): Promise<ActiveBan[]> {
    const select = this.db
      .selectFrom('key_bans as b')
      .innerJoin('api_keys as k', 'k.id', 'b.key_id')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .select(['b.key_id', 'a.name', 'b.started_at', 'b.until'])
      .where('b.lifted_at', 'is', null)
      .where('b.until', '>', now);
    const latest = new Map<string, ActiveBan>();
    for (const row of await this.within(select.execute())) {
      const ban = {
        keyId: row.key_id,
        account: row.name,
        startedAt: toNumber(row.started_at),
        until: toNumber(row.until),
      };
      const known = latest.get(ban.keyId);
      if (known === undefined || known.until < ban.until) latest.set(ban.keyId, ban);
    }
    // Sorted here rather than in SQL: PostgreSQL would order ids by the database's collation.
    return [...latest.values()].sort((a, b) => b.startedAt - a.startedAt || byBytes(a.keyId, b.keyId));
  }
}

class SqlOperatorTokens extends SqlTable implements OperatorTokenStore {
  async create(token: NewOperatorToken, now: number): Promise<OperatorTokenRecord> {
    const insert = this.db
      .insertInto('operator_tokens')
      .values({ id: token.id, hash: token.hash, name: token.name, created_at: now })
      .returningAll();
    try {
      return withoutHash(toOperatorToken(await this.within(insert.executeTakeFirstOrThrow())));
    } catch (error) {
      if (this.dialect.isUniqueViolation(error))
        throw new ConflictError(`an operator token with id '${token.id}' already exists`);
      throw error;
    }
  }

  async findById(id: string): Promise<StoredOperatorToken | undefined> {
    const select = this.forChange(this.db.selectFrom('operator_tokens').selectAll().where('id', '=', id));
    const row = await this.within(select.executeTakeFirst());
    return row ? toOperatorToken(row) : undefined;
  }

  async list(): Promise<OperatorTokenRecord[]> {
    const rows = await this.within(this.db.selectFrom('operator_tokens').selectAll().execute());
    return rows
      .map((row) => withoutHash(toOperatorToken(row)))
      .sort((a, b) => a.createdAt - b.createdAt || byBytes(a.id, b.id));
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const update = this.db
      .updateTable('operator_tokens')
      .set({ revoked_at: sql<number>`coalesce(${sql.ref('revoked_at')}, ${now})` })
      .where('id', '=', id);
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  recordLastUsed(id: string, at: number, mode: BackgroundWrite = 'if-idle'): Promise<boolean> {
    const update = this.db
      .updateTable('operator_tokens')
      .set({ last_used_at: Math.trunc(at) })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', Math.trunc(at))]))
      .compile();
    return this.within(this.dialect.writeInBackground([update], mode));
  }
}

class SqlOperatorSessions extends SqlTable implements OperatorSessionStore {
  async start(session: NewOperatorSession, now: number): Promise<void> {
    const insert = this.db.insertInto('operator_sessions').values({
      hash: session.hash,
      token_id: session.tokenId,
      started_at: now,
      last_seen_at: now,
    });
    try {
      await this.within(insert.execute());
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) throw new ConflictError('an operator session with that id exists');
      throw error;
    }
  }

  async find(hash: string): Promise<StoredOperatorSession | undefined> {
    const select = this.db
      .selectFrom('operator_sessions as s')
      .innerJoin('operator_tokens as t', 't.id', 's.token_id')
      .select([
        's.started_at',
        's.last_seen_at',
        's.ended_at',
        't.id',
        't.name',
        't.created_at',
        't.revoked_at',
        't.last_used_at',
      ])
      .where('s.hash', '=', hash);
    const row = await this.within(select.executeTakeFirst());
    if (!row) return undefined;
    return {
      startedAt: toNumber(row.started_at),
      lastSeenAt: toNumber(row.last_seen_at),
      endedAt: toNullableNumber(row.ended_at),
      token: {
        id: row.id,
        name: row.name,
        createdAt: toNumber(row.created_at),
        revokedAt: toNullableNumber(row.revoked_at),
        lastUsedAt: toNullableNumber(row.last_used_at),
      },
    };
  }

  async touch(hash: string, at: number): Promise<boolean> {
    const update = this.db
      .updateTable('operator_sessions')
      .set({ last_seen_at: Math.trunc(at) })
      .where('hash', '=', hash)
      .where('ended_at', 'is', null)
      .where('last_seen_at', '<', Math.trunc(at));
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  async end(hash: string, at: number): Promise<boolean> {
    const update = this.db
      .updateTable('operator_sessions')
      .set({ ended_at: Math.trunc(at) })
      .where('hash', '=', hash)
      .where('ended_at', 'is', null);
    return (await this.within(update.executeTakeFirst())).numUpdatedRows > 0n;
  }

  async endForToken(tokenId: string, at: number): Promise<number> {
    const update = this.db
      .updateTable('operator_sessions')
      .set({ ended_at: Math.trunc(at) })
      .where('token_id', '=', tokenId)
      .where('ended_at', 'is', null);
    return Number((await this.within(update.executeTakeFirst())).numUpdatedRows);
  }

  async purge(cutoffs: OperatorSessionCutoffs): Promise<number> {
    const purge = this.db
      .deleteFrom('operator_sessions')
      .where((eb) =>
        eb.or([
          eb('ended_at', '<', cutoffs.endedBefore),
          eb('last_seen_at', '<', cutoffs.lastSeenBefore),
          eb('started_at', '<', cutoffs.startedBefore),
        ]),
      );
    return Number((await this.within(purge.executeTakeFirst())).numDeletedRows);
  }
}

/** Rows per INSERT: far below SQLite's limit on bound values (7 per row), few statements per flush. */
const USAGE_ROWS_PER_STATEMENT = 500;

/** Primary-key order, so that two instances adding overlapping batches lock rows alike and never deadlock. */
const byUsageKey = (a: UsageCount, b: UsageCount): number =>
  a.accountId - b.accountId ||
  a.hour - b.hour ||
  byBytes(a.keyId, b.keyId) ||
  byBytes(a.operation, b.operation) ||
  byBytes(a.outcome, b.outcome);

class SqlUsage extends SqlTable implements UsageStore {
  async add(counts: readonly UsageCount[], mode: BackgroundWrite): Promise<boolean> {
    if (counts.length === 0) return true;
    const sorted = [...counts].sort(byUsageKey);
    const statements: CompiledQuery[] = [];
    for (let start = 0; start < sorted.length; start += USAGE_ROWS_PER_STATEMENT) {
      statements.push(this.addition(sorted.slice(start, start + USAGE_ROWS_PER_STATEMENT)).compile());
    }
    return this.within(this.dialect.writeInBackground(statements, mode));
  }

  /** One atomic read-add-write per row on both backends, however many instances add at once. */
  private addition(counts: readonly UsageCount[]) {
    return this.db
      .insertInto('usage_hours')
      .values(
        counts.map((count) => ({
          account_id: count.accountId,
          key_id: count.keyId,
          operation: count.operation,
          outcome: count.outcome,
          hour: count.hour,
          count: count.count,
          last_at: Math.trunc(count.lastAt),
        })),
      )
      .onConflict((conflict) =>
        conflict.columns(['account_id', 'hour', 'key_id', 'operation', 'outcome']).doUpdateSet((eb) => ({
          count: eb(eb.ref('usage_hours.count'), '+', eb.ref('excluded.count')),
          last_at: eb
            .case()
            .when(eb.ref('excluded.last_at'), '>', eb.ref('usage_hours.last_at'))
            .then(eb.ref('excluded.last_at'))
            .else(eb.ref('usage_hours.last_at'))
            .end(),
        })),
      );
  }

  async series(query: UsageSeriesQuery): Promise<UsageBucket[]> {
    // A literal, not a parameter: PostgreSQL must see the selected and the grouped expression as one.
    const at = sql<IntegerValue>`hour - (hour % ${sql.lit(Math.trunc(query.bucketMs))})`;
    let select = this.db
      .selectFrom('usage_hours')
      .select((eb) => [at.as('at'), 'operation', 'outcome', eb.fn.sum<IntegerValue>('count').as('count')])
      .where('hour', '>=', query.from)
      .where('hour', '<', query.to);
    if (query.accountId !== undefined) select = select.where('account_id', '=', query.accountId);
    const rows = await this.within(select.groupBy([at, 'operation', 'outcome']).execute());
    return rows.map((row) => ({
      at: toNumber(row.at),
      operation: row.operation,
      outcome: row.outcome,
      count: toNumber(row.count),
    }));
  }

  async callsByKey(query: KeyCallsQuery): Promise<StoredKeyCalls[]> {
    let select = this.db
      .selectFrom('usage_hours as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select((eb) => [
        'u.account_id',
        'a.name',
        'u.key_id',
        eb.fn.sum<IntegerValue>('u.count').as('calls'),
        eb.fn.max('u.last_at').as('last_at'),
      ])
      .where('u.operation', '=', query.operation)
      .where('u.hour', '>=', query.since);
    if (query.accountId !== undefined) select = select.where('u.account_id', '=', query.accountId);
    const rows = await this.within(select.groupBy(['u.account_id', 'a.name', 'u.key_id']).execute());
    return rows.map((row) => ({
      accountId: toNumber(row.account_id),
      accountName: row.name,
      keyId: row.key_id,
      calls: toNumber(row.calls),
      lastAt: toNumber(row.last_at),
    }));
  }

  async totalsByAccount(range: { readonly from: number; readonly to: number }): Promise<StoredAccountTotals[]> {
    const select = this.db
      .selectFrom('usage_hours as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select((eb) => [
        'u.account_id',
        'a.name',
        eb.fn.sum<IntegerValue>('u.count').as('requests'),
        eb.fn
          .sum<IntegerValue>(
            eb.case().when('u.outcome', 'in', REFUSAL_OUTCOMES).then(eb.ref('u.count')).else(sql.lit(0)).end(),
          )
          .as('refusals'),
      ])
      .where('u.hour', '>=', range.from)
      .where('u.hour', '<', range.to)
      .groupBy(['u.account_id', 'a.name']);
    const rows = await this.within(select.execute());
    return rows.map((row) => ({
      accountId: toNumber(row.account_id),
      accountName: row.name,
      requests: toNumber(row.requests),
      refusals: toNumber(row.refusals),
    }));
  }

  purge(before: number): Promise<number | false> {
    return this.purgeExpired('usage_hours', before);
  }
}

const toAuditEntry = (row: Selectable<AuditEntriesTable>): AuditEntryRecord => ({
  id: toNumber(row.id),
  at: toNumber(row.at),
  actor: actorOfRow(row),
  via: viaOfRow(row),
  action: row.action,
  target: { type: row.target_type, id: row.target_id },
  before: row.before === null ? null : (JSON.parse(row.before) as AuditValues),
  after: row.after === null ? null : (JSON.parse(row.after) as AuditValues),
  requestId: row.request_id,
});

function actorOfRow(row: Selectable<AuditEntriesTable>): AuditActor {
  if (row.actor_kind === 'cli') return { kind: 'cli', user: row.actor_id };
  // A key's row keeps its account's name where a token's keeps its label.
  if (row.actor_kind === 'key') return { kind: 'key', id: row.actor_id, account: row.actor_name ?? '' };
  return { kind: 'operator_token', id: row.actor_id, name: row.actor_name };
}

/**
 * Only the CLI's actor is `cli`, so its entries are made through the CLI whatever their column says: the
 * CLI of the release before the column, run during a rolling upgrade, leaves it at its default.
 */
function viaOfRow(row: Pick<Selectable<AuditEntriesTable>, 'actor_kind' | 'via'>): AuditVia {
  return row.actor_kind === 'cli' ? 'cli' : row.via;
}

function actorColumns(actor: AuditActor): { actor_id: string; actor_name: string | null } {
  if (actor.kind === 'cli') return { actor_id: actor.user, actor_name: null };
  if (actor.kind === 'key') return { actor_id: actor.id, actor_name: actor.account };
  return { actor_id: actor.id, actor_name: actor.name };
}

const auditRowOf = (entry: NewAuditEntry): Insertable<AuditEntriesTable> => ({
  at: Math.trunc(entry.at),
  actor_kind: entry.actor.kind,
  ...actorColumns(entry.actor),
  via: entry.via,
  action: entry.action,
  target_type: entry.target.type,
  target_id: entry.target.id,
  before: entry.before === null ? null : JSON.stringify(entry.before),
  after: entry.after === null ? null : JSON.stringify(entry.after),
  request_id: entry.requestId,
});

class SqlAudit extends SqlTable implements AuditStore {
  change<T>(change: (tables: AuditedTables) => Promise<AuditedChange<T>>): Promise<T> {
    const transaction = this.db.transaction().execute(async (trx) => {
      // The tables over this transaction; the call's deadline bounds the whole of it.
      const dialect: StoreDialect = { ...this.dialect, db: trx };
      const within: Within = (work) => work;
      const tables: AuditedTables = {
        accounts: new SqlAccounts(dialect, within, true),
        keys: new SqlKeys(dialect, within, true),
        bans: new SqlBans(dialect, within, true),
        operatorTokens: new SqlOperatorTokens(dialect, within, true),
        idempotency: new SqlIdempotency(dialect, within, true),
      };
      const { result, entry } = await change(tables);
      const entries = entry === undefined ? [] : 'action' in entry ? [entry] : entry;
      if (entries.length > 0) await trx.insertInto('audit_entries').values(entries.map(auditRowOf)).execute();
      return result;
    });
    return this.within(transaction);
  }

  async record(entry: NewAuditEntry): Promise<void> {
    await this.within(this.db.insertInto('audit_entries').values(auditRowOf(entry)).execute());
  }

  async list(query: AuditQuery): Promise<AuditEntryRecord[]> {
    const { actor, target, action, via, from, to, olderThan } = query;
    let select = this.db.selectFrom('audit_entries').selectAll();
    if (actor !== undefined) select = select.where('actor_kind', '=', actor.kind);
    if (actor?.id !== undefined) select = select.where('actor_id', '=', actor.id);
    if (target !== undefined) select = select.where('target_type', '=', target.type);
    if (target?.id !== undefined) select = select.where('target_id', '=', target.id);
    if (action !== undefined) select = select.where('action', '=', action);
    // As the entries read (viaOfRow): the CLI's by their actor, a token's by the column.
    if (via === 'cli') select = select.where('actor_kind', '=', 'cli');
    else if (via === 'key') select = select.where('actor_kind', '=', 'key');
    else if (via !== undefined) select = select.where('via', '=', via).where('actor_kind', '=', 'operator_token');
    if (from !== undefined) select = select.where('at', '>=', from);
    if (to !== undefined) select = select.where('at', '<', to);
    if (olderThan !== undefined) {
      select = select.where((eb) =>
        eb.or([eb('at', '<', olderThan.at), eb.and([eb('at', '=', olderThan.at), eb('id', '<', olderThan.id)])]),
      );
    }
    const page = select.orderBy('at', 'desc').orderBy('id', 'desc').limit(Math.trunc(query.limit));
    return (await this.within(page.execute())).map(toAuditEntry);
  }

  purge(before: number): Promise<number | false> {
    return this.purgeExpired('audit_entries', before);
  }
}
