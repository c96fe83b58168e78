import { CompiledQuery, sql, type Compilable, type ExpressionBuilder, type Kysely } from 'kysely';
import { ConflictError } from '../errors.ts';
import { withinDeadline } from './deadline.ts';
import type { DatabaseSchema, IntegerValue } from './database-schema.ts';
import type {
  AccountRecord,
  AccountStore,
  ApiKeyRecord,
  BanStore,
  IdempotencyScope,
  IdempotencyStore,
  IdempotentCreate,
  IdempotentOutcome,
  IdempotentResponse,
  KeyPrincipal,
  KeyStore,
  NewAccount,
  NewApiKey,
  NewPetRecord,
  PetListQuery,
  PetRecord,
  PetStatus,
  PetStore,
  Plan,
  Store,
} from './store.ts';

/**
 * The queries and row mappings both backends share. What truly differs lives in the dialect files
 * and reaches this one through `StoreDialect`: how pet creations are committed together, how
 * transactions lock, and how driver errors are recognised.
 */

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
   * When set, every storage call (not migrate, ping or close) rejects with StorageUnavailableError
   * once this long has passed, however its steps (pool wait, connect, statements) add up.
   */
  readonly callTimeoutMs?: number;
  migrate(): Promise<number>;
  /** Closes connections; called once. */
  destroy(): Promise<void>;
}

export type Database = Kysely<DatabaseSchema>;

// ---------------------------------------------------------------------------------------------
// Row mappings

const toNumber = (value: IntegerValue): number => Number(value);
const toNullableNumber = (value: IntegerValue | null): number | null => (value === null ? null : Number(value));

export interface PetRow {
  readonly id: IntegerValue;
  readonly name: string;
  readonly category_id: IntegerValue;
  readonly status: PetStatus | null;
}

/** BigInt() of the driver's decimal string or exact bigint keeps categoryId digit for digit. */
export const toPet = (row: PetRow): PetRecord => ({
  id: toNumber(row.id),
  name: row.name,
  categoryId: BigInt(row.category_id),
  status: row.status,
});

interface AccountRow {
  readonly id: IntegerValue;
  readonly name: string;
  readonly plan: Plan;
  readonly per_minute: IntegerValue | null;
  readonly per_day: IntegerValue | null;
  readonly created_at: IntegerValue;
}

const toAccount = (row: AccountRow): AccountRecord => ({
  id: toNumber(row.id),
  name: row.name,
  plan: row.plan,
  perMinute: toNullableNumber(row.per_minute),
  perDay: toNullableNumber(row.per_day),
  createdAt: toNumber(row.created_at),
});

interface KeyRow {
  readonly id: string;
  readonly account_id: IntegerValue;
  readonly created_at: IntegerValue;
  readonly expires_at: IntegerValue | null;
  readonly revoked_at: IntegerValue | null;
  readonly last_used_at: IntegerValue | null;
  readonly banned_until: IntegerValue | null;
}

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: toNumber(row.account_id),
  createdAt: toNumber(row.created_at),
  expiresAt: toNullableNumber(row.expires_at),
  revokedAt: toNullableNumber(row.revoked_at),
  lastUsedAt: toNullableNumber(row.last_used_at),
  bannedUntil: toNullableNumber(row.banned_until),
});

interface PrincipalRow {
  readonly key_id: string;
  readonly account_id: IntegerValue;
  readonly account_name: string;
  readonly plan: Plan;
  readonly per_minute: IntegerValue | null;
  readonly per_day: IntegerValue | null;
  readonly expires_at: IntegerValue | null;
  readonly revoked_at: IntegerValue | null;
  readonly banned_until: IntegerValue | null;
}

const toPrincipal = (row: PrincipalRow): KeyPrincipal => ({
  keyId: row.key_id,
  accountId: toNumber(row.account_id),
  accountName: row.account_name,
  plan: row.plan,
  perMinute: toNullableNumber(row.per_minute),
  perDay: toNullableNumber(row.per_day),
  expiresAt: toNullableNumber(row.expires_at),
  revokedAt: toNullableNumber(row.revoked_at),
  bannedUntil: toNullableNumber(row.banned_until),
});

// ---------------------------------------------------------------------------------------------
// Statements shared by both dialects, and precompiling for the ones run most

export const PET_COLUMNS = ['id', 'name', 'category_id', 'status'] as const;

export interface PrecompiledQuery<Row> {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  /** Only carries the row type. */
  readonly row?: Row;
}

/**
 * Compiles a query once and binds each call's values in the order `parameters` lists them, for
 * statements run so often that building and compiling them per call shows: in the group commit it
 * cost about as much as the commits themselves (~30 µs a row). Compiling a sample checks that the
 * order is the one Kysely binds in.
 */
export function precompile<Args, Row>(
  build: (args: Args) => Compilable<Row>,
  parameters: (args: Args) => readonly unknown[],
  sample: Args,
): (args: Args) => PrecompiledQuery<Row> {
  const compiled = build(sample).compile();
  const expected = parameters(sample);
  const sameOrder =
    compiled.parameters.length === expected.length &&
    compiled.parameters.every((value, index) => value === expected[index]);
  if (!sameOrder) throw new Error(`unexpected parameter order in ${compiled.sql}`);
  return (args) => ({ sql: compiled.sql, parameters: parameters(args) });
}

/** Runs a precompiled query through Kysely's executor, on whichever database `db` is. */
async function executePrecompiled<Row>(db: Database, query: PrecompiledQuery<Row>): Promise<Row[]> {
  return (await db.executeQuery<Row>(CompiledQuery.raw(query.sql, [...query.parameters]))).rows;
}

export const insertPet = (db: Database, pet: NewPetRecord, now: number) =>
  db
    .insertInto('pets')
    .values({ name: pet.name, category_id: pet.categoryId, status: pet.status, created_at: now })
    .returning('id');

/** The record an earlier request with this key left, if any. */
export const findIdempotency = (db: Database, scope: IdempotencyScope) =>
  db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'status_code', 'body'])
    .where('account_id', '=', scope.accountId)
    .where('key', '=', scope.key);

export interface IdempotencyRow {
  readonly fingerprint: string;
  readonly status_code: IntegerValue | null;
  readonly body: string | null;
}

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

/** Stores the completed record, in the creation's own transaction. */
export const storeIdempotency = (db: Database, request: IdempotentCreate, now: number, response: IdempotentResponse) =>
  db
    .insertInto('idempotency_keys')
    .values({
      account_id: request.accountId,
      key: request.key,
      fingerprint: request.fingerprint,
      created_at: now,
      status_code: response.statusCode,
      body: response.body,
    })
    .onConflict((conflict) =>
      conflict.columns(['account_id', 'key']).doUpdateSet((eb) => ({
        fingerprint: eb.ref('excluded.fingerprint'),
        created_at: eb.ref('excluded.created_at'),
        status_code: eb.ref('excluded.status_code'),
        body: eb.ref('excluded.body'),
      })),
    );

/** Ids are non-negative safe integers; anything else names no row (and must not reach a bigint cast). */
const isId = (id: number): boolean => Number.isSafeInteger(id) && id >= 0;

// ---------------------------------------------------------------------------------------------
// Store

export class SqlStore implements Store {
  readonly backend: Store['backend'];
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  private readonly dialect: StoreDialect;
  private closing: Promise<void> | undefined;

  constructor(dialect: StoreDialect) {
    this.dialect = dialect;
    this.backend = dialect.backend;
    const bound = <T extends object>(target: T): T =>
      dialect.callTimeoutMs === undefined ? target : withinDeadline(target, dialect.callTimeoutMs);
    this.pets = bound(new SqlPets(dialect));
    this.accounts = bound(new SqlAccounts(dialect));
    this.keys = bound(new SqlKeys(dialect));
    this.idempotency = bound(new SqlIdempotency(dialect.db));
    this.bans = bound(new SqlBans(dialect.db));
  }

  migrate(): Promise<number> {
    return this.dialect.migrate();
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.dialect.db);
  }

  close(): Promise<void> {
    this.closing ??= this.dialect.pets.drain().finally(() => this.dialect.destroy());
    return this.closing;
  }
}

class SqlPets implements PetStore {
  private readonly dialect: StoreDialect;
  /**
   * Every read of a pet that is not cached, unknown ids included, runs this. Building and compiling
   * it on every call cost about 64,000 of the 277,000 instructions of a 404 (callgrind).
   */
  private readonly selectById: (id: number) => PrecompiledQuery<PetRow>;
  private readonly listStatements = new Map<string, (args: ListArgs) => PrecompiledQuery<PetRow>>();
  constructor(dialect: StoreDialect) {
    this.dialect = dialect;
    this.selectById = precompile<number, PetRow>(
      (id) => dialect.db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', id),
      (id) => [id],
      1,
    );
  }

  create(pet: NewPetRecord, now: number): Promise<PetRecord> {
    return this.dialect.pets.create(pet, now);
  }

  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return this.dialect.pets.createIdempotent(pet, now, request);
  }

  async get(id: number): Promise<PetRecord | undefined> {
    if (!isId(id)) return undefined;
    const [row] = await executePrecompiled(this.dialect.db, this.selectById(id));
    return row ? toPet(row) : undefined;
  }

  async list(query: PetListQuery): Promise<PetRecord[]> {
    // Ids are safe integers: past 2^53 there is nothing to list, and fractions compare like their floor.
    if (query.afterId >= Number.MAX_SAFE_INTEGER || query.limit <= 0) return [];
    const afterId = Math.max(0, Math.floor(query.afterId) || 0);
    const select = this.listStatement(Math.trunc(query.limit), query.status !== undefined);
    return (await executePrecompiled(this.dialect.db, select({ afterId, status: query.status }))).map(toPet);
  }

  /**
   * The listing for one LIMIT, with or without the status filter, compiled on first use. LIMIT is
   * written into the SQL: a bound LIMIT made SQLite re-prepare the statement on every call, which
   * cost a third of a list request. Compiled once, not per call, an uncached 30-pet page went from
   * 590,000 to 444,000 instructions (callgrind).
   */
  private listStatement(limit: number, filtered: boolean): (args: ListArgs) => PrecompiledQuery<PetRow> {
    const key = `${limit}:${filtered}`;
    let statement = this.listStatements.get(key);
    if (statement === undefined) {
      const db = this.dialect.db;
      statement = precompile<ListArgs, PetRow>(
        ({ afterId, status }) => {
          const select = db.selectFrom('pets').select(PET_COLUMNS).where('id', '>', afterId);
          const chosen = status === undefined ? select : select.where('status', '=', status);
          return chosen.orderBy('id').limit(sql.lit(limit));
        },
        ({ afterId, status }) => (status === undefined ? [afterId] : [afterId, status]),
        { afterId: 1, status: filtered ? 'sold' : undefined },
      );
      // Callers ask for at most a page and one more row: this only bounds an unexpected caller.
      if (this.listStatements.size >= MAX_LIST_STATEMENTS) this.listStatements.clear();
      this.listStatements.set(key, statement);
    }
    return statement;
  }
}

interface ListArgs {
  readonly afterId: number;
  readonly status: PetStatus | undefined;
}

const MAX_LIST_STATEMENTS = 512;

class SqlAccounts implements AccountStore {
  private readonly db: Database;
  private readonly dialect: StoreDialect;
  constructor(dialect: StoreDialect) {
    this.db = dialect.db;
    this.dialect = dialect;
  }

  async create(account: NewAccount, now: number): Promise<AccountRecord> {
    try {
      const row = await this.db
        .insertInto('accounts')
        .values({
          name: account.name,
          plan: account.plan,
          per_minute: account.perMinute,
          per_day: account.perDay,
          created_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toAccount(row);
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) {
        throw new ConflictError(`an account named '${account.name}' already exists`);
      }
      throw error;
    }
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.db.selectFrom('accounts').selectAll().orderBy('id').execute()).map(toAccount);
  }

  async setPlan(
    name: string,
    plan: Plan,
    perMinute: number | null,
    perDay: number | null,
  ): Promise<AccountRecord | undefined> {
    const row = await this.db
      .updateTable('accounts')
      .set({ plan, per_minute: perMinute, per_day: perDay })
      .where('name', '=', name)
      .returningAll()
      .executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<IntegerValue>().as('count'))
      .executeTakeFirstOrThrow();
    return toNumber(row.count);
  }
}

const KEY_COLUMNS = ['k.id', 'k.account_id', 'k.created_at', 'k.expires_at', 'k.revoked_at', 'k.last_used_at'] as const;

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

class SqlKeys implements KeyStore {
  private readonly db: Database;
  private readonly dialect: StoreDialect;
  constructor(dialect: StoreDialect) {
    this.db = dialect.db;
    this.dialect = dialect;
  }

  async create(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    try {
      const row = await this.db
        .insertInto('api_keys')
        .values({ id: key.id, account_id: key.accountId, hash: key.hash, created_at: now, expires_at: key.expiresAt })
        .returning(['id', 'account_id', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'])
        .executeTakeFirstOrThrow();
      return toKey({ ...row, banned_until: null });
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) throw new ConflictError(`a key with id '${key.id}' already exists`);
      throw error;
    }
  }

  async findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .select([
        'k.id as key_id',
        'k.account_id',
        'a.name as account_name',
        'a.plan',
        'a.per_minute',
        'a.per_day',
        'k.expires_at',
        'k.revoked_at',
        bannedUntil,
      ])
      .where('k.hash', '=', hash)
      .executeTakeFirst();
    return row ? toPrincipal(row) : undefined;
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .select([...KEY_COLUMNS, bannedUntil])
      .where('k.id', '=', id)
      .executeTakeFirst();
    return row ? toKey(row) : undefined;
  }

  async listForAccount(accountId: number): Promise<ApiKeyRecord[]> {
    if (!isId(accountId)) return [];
    const rows = await this.db
      .selectFrom('api_keys as k')
      .select([...KEY_COLUMNS, bannedUntil])
      .where('k.account_id', '=', accountId)
      .execute();
    // Sorted here rather than in SQL: PostgreSQL would order ids by the database's collation.
    return rows.map(toKey).sort((a, b) => a.createdAt - b.createdAt || byBytes(a.id, b.id));
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: sql<number>`coalesce(${sql.ref('revoked_at')}, ${now})` })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * One transaction for the whole batch. Keys are updated in id order, so two instances flushing
   * overlapping batches lock rows in the same order and cannot deadlock; a time never moves back.
   */
  async recordLastUsed(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed].sort(([a], [b]) => byBytes(a, b));
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of entries) {
        await trx
          .updateTable('api_keys')
          .set({ last_used_at: Math.trunc(at) })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', Math.trunc(at))]))
          .execute();
      }
    });
  }
}

class SqlIdempotency implements IdempotencyStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  async purge(before: number): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

class SqlBans implements BanStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  async ban(keyId: string, startedAt: number, until: number): Promise<void> {
    await this.db.insertInto('key_bans').values({ key_id: keyId, started_at: startedAt, until }).execute();
  }

  async lift(keyId: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('key_bans')
      .set({ lifted_at: now })
      .where('key_id', '=', keyId)
      .where('lifted_at', 'is', null)
      .where('until', '>', now)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async countSince(keyId: string, since: number): Promise<number> {
    const row = await this.db
      .selectFrom('key_bans')
      .select((eb) => eb.fn.countAll<IntegerValue>().as('count'))
      .where('key_id', '=', keyId)
      .where('started_at', '>=', since)
      .executeTakeFirstOrThrow();
    return toNumber(row.count);
  }
}
