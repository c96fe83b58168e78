import { Client, Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import { ConflictError, StorageUnavailableError } from '../errors.ts';
import { postgresMigrations } from './postgres-migrations.ts';
import type {
  AccountRecord,
  AccountStore,
  ApiKeyRecord,
  BanStore,
  IdempotencyReservation,
  IdempotencyScope,
  IdempotencyStore,
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

export interface PostgresStoreOptions {
  /** Connections this instance may open. */
  readonly poolSize: number;
  /** Longest wait for a connection, and for each statement, before StorageUnavailableError. */
  readonly timeoutMs: number;
  /**
   * Told about errors of idle connections (e.g. the server restarted). The pool has already dropped
   * the connection and opens a new one on the next query; this is for logging only.
   */
  readonly onIdleError?: (error: Error) => void;
}

/**
 * The PostgreSQL store: one pg.Pool per instance; several instances may share one database.
 *
 * - The schema is chosen with the standard libpq `options` parameter, e.g.
 *   `postgres://u@h/db?options=-c%20search_path%3Dpetstore`; the URL's own settings win over the
 *   defaults set here.
 * - bigint columns arrive as strings: ids and times become numbers (they stay below 2^53),
 *   category_id becomes an exact BigInt and is sent as a decimal string.
 * - Connection failures and timeouts become StorageUnavailableError (HTTP 503); everything else,
 *   e.g. a violated constraint, propagates as it is.
 */
export function openPostgresStore(url: string, options: PostgresStoreOptions): Store {
  return new PostgresStore(new Database(url, options), url, options);
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Node socket errors and SQLSTATEs that mean "storage is not reachable right now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '57014', // query_canceled: statement_timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovering)
  '53300', // too_many_connections
  '55P03', // lock_not_available
]);

/** Errors pg and pg-pool raise without a code. */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /query read timeout/i,
  /is not queryable/i,
  /^timeout expired$/i,
];

function isUnavailable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  const code = 'code' in error ? error.code : undefined;
  // SQLSTATE class 08: connection exception.
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isUnavailable(inner, depth + 1))) return true;
  return isUnavailable(error.cause, depth + 1);
}

function reasonOf(error: unknown): string {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  if (
    code === '57014' ||
    (error instanceof Error && /timeout|timed out/i.test(error.message)) ||
    code === 'ETIMEDOUT'
  ) {
    return 'PostgreSQL did not answer in time';
  }
  if (code === 'ECONNREFUSED') return 'PostgreSQL refused the connection';
  return 'the connection to PostgreSQL failed';
}

/** Storage outages become StorageUnavailableError; any other error is returned unchanged. */
function translate(error: unknown): unknown {
  if (error instanceof StorageUnavailableError || !isUnavailable(error)) return error;
  return new StorageUnavailableError(`storage is unavailable: ${reasonOf(error)}; retry later`, { cause: error });
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === '23505';
}

// ---------------------------------------------------------------------------------------------
// Connections

type Values = readonly unknown[];

/** A query function bound to one connection inside a transaction. */
type Query = <R extends QueryResultRow>(text: string, values?: Values) => Promise<QueryResult<R>>;

class Database {
  readonly pool: Pool;
  private ended = false;

  constructor(url: string, options: PostgresStoreOptions) {
    this.pool = new Pool({
      connectionString: url,
      max: options.poolSize,
      // Waiting for a free pooled connection and opening a new one are both bounded by this.
      connectionTimeoutMillis: options.timeoutMs,
      // The server cancels a statement at the timeout (57014, the connection stays usable)...
      statement_timeout: options.timeoutMs,
      // ...and the client gives up a little later if the server itself does not answer.
      query_timeout: options.timeoutMs + Math.min(1000, options.timeoutMs),
      // A connection left idle inside a transaction (a stuck caller) must not hold locks forever.
      idle_in_transaction_session_timeout: Math.max(10 * options.timeoutMs, 60_000),
      application_name: 'petstore',
      keepAlive: true,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection that dies (server restart, network cut, pg_terminate_backend) is emitted
    // here after the pool removed it. Without a listener the process would crash; with one the
    // pool simply opens a new connection for the next query, so it recovers on its own.
    this.pool.on('error', (error) => options.onIdleError?.(error));
  }

  async query<R extends QueryResultRow>(text: string, values: Values = []): Promise<QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, [...values]);
    } catch (error) {
      throw translate(error);
    }
  }

  /** Runs `work` in one transaction; resolves after COMMIT. */
  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw translate(error);
    }
    // A checked-out client has no pool listener: a socket error between two statements would
    // otherwise be an unhandled 'error' event.
    let broken: Error | undefined;
    const onError = (error: Error): void => {
      broken = error;
    };
    client.on('error', onError);
    const query: Query = (text, values = []) => client.query(text, [...values]);
    try {
      await query('BEGIN');
      const result = await work(query);
      await query('COMMIT');
      return result;
    } catch (error) {
      const translated = translate(error);
      if (translated instanceof StorageUnavailableError) {
        // The connection's state is unknown: drop it; the server rolls back on disconnect.
        broken ??= translated;
      } else if (!broken) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error('ROLLBACK failed');
        });
      }
      throw translated;
    } finally {
      client.removeListener('error', onError);
      // Releasing with an error destroys the connection instead of returning it to the pool.
      client.release(broken);
    }
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.pool.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Rows

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus | null;
}

interface AccountRow {
  id: string;
  name: string;
  plan: Plan;
  per_minute: string | null;
  per_day: string | null;
  created_at: string;
}

interface KeyRow {
  id: string;
  account_id: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  banned_until: string | null;
}

interface PrincipalRow {
  key_id: string;
  account_id: string;
  account_name: string;
  plan: Plan;
  per_minute: string | null;
  per_day: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  banned_until: string | null;
}

interface IdempotencyRow {
  fingerprint: string;
  created_at: string;
  status_code: number | null;
  body: string | null;
}

const nullableNumber = (value: string | null): number | null => (value === null ? null : Number(value));

const toPet = (row: PetRow): PetRecord => ({
  id: Number(row.id),
  name: row.name,
  categoryId: BigInt(row.category_id),
  status: row.status,
});

const toAccount = (row: AccountRow): AccountRecord => ({
  id: Number(row.id),
  name: row.name,
  plan: row.plan,
  perMinute: nullableNumber(row.per_minute),
  perDay: nullableNumber(row.per_day),
  createdAt: Number(row.created_at),
});

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: Number(row.account_id),
  createdAt: Number(row.created_at),
  expiresAt: nullableNumber(row.expires_at),
  revokedAt: nullableNumber(row.revoked_at),
  lastUsedAt: nullableNumber(row.last_used_at),
  bannedUntil: nullableNumber(row.banned_until),
});

/** Ids are positive safe integers; anything else names no row (and must not reach a bigint cast). */
const isId = (id: number): boolean => Number.isSafeInteger(id) && id >= 0;

// ---------------------------------------------------------------------------------------------
// Store

/**
 * Advisory lock keys, scoped to the schema so that deployments sharing a database in different
 * schemas do not wait on each other.
 */
const lockKey = (purpose: string): string =>
  `hashtextextended('petstore:${purpose}:' || coalesce(current_schema(), ''), 0)`;

class PostgresStore implements Store {
  readonly backend = 'postgres';
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  private readonly db: Database;
  private readonly url: string;
  private readonly options: PostgresStoreOptions;

  constructor(db: Database, url: string, options: PostgresStoreOptions) {
    this.db = db;
    this.url = url;
    this.options = options;
    this.pets = new PostgresPets(db);
    this.accounts = new PostgresAccounts(db);
    this.keys = new PostgresKeys(db);
    this.idempotency = new PostgresIdempotency(db);
    this.bans = new PostgresBans(db);
  }

  /**
   * Applies pending migrations in one transaction under an advisory lock, so instances starting
   * together apply each migration exactly once: the others wait, then find nothing to do. Runs on
   * its own connection without the statement timeout, since a migration may legitimately be slow.
   */
  async migrate(): Promise<number> {
    const client = new Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.options.timeoutMs,
      application_name: 'petstore-migrate',
    });
    let broken: Error | undefined;
    client.on('error', (error) => {
      broken = error;
    });
    try {
      await client.connect();
    } catch (error) {
      throw translate(error);
    }
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(${lockKey('migrations')})`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
      );
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
          (row) => row.version,
        ),
      );
      let count = 0;
      for (const migration of postgresMigrations) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          Date.now(),
        ]);
        count += 1;
      }
      await client.query('COMMIT');
      return count;
    } catch (error) {
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw translate(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}

type PetIdempotency = IdempotencyScope & { respond(pet: PetRecord): IdempotentResponse };

interface QueuedCreate {
  readonly pet: NewPetRecord;
  readonly now: number;
  resolve(pet: PetRecord): void;
  reject(error: unknown): void;
}

/** Most creations one group-commit statement carries. */
const MAX_BATCH = 500;

class PostgresPets implements PetStore {
  private readonly db: Database;
  private queue: QueuedCreate[] = [];
  private flushing = false;
  constructor(db: Database) {
    this.db = db;
  }

  /**
   * Takes a transaction-scoped advisory lock before drawing the id, so ids become visible in
   * ascending order, as with SQLite's single writer: a reader paging with `afterId` never sees
   * id N+1 committed while N is still to come. Without idempotency the statement is its own
   * transaction (one round trip); the promise resolves after COMMIT (synchronous_commit).
   */
  async create(pet: NewPetRecord, now: number, idempotency?: PetIdempotency): Promise<PetRecord> {
    if (!idempotency) return this.enqueue(pet, now);
    const insert = `WITH serial AS (SELECT pg_advisory_xact_lock(${lockKey('pets')}))
      INSERT INTO pets (name, category_id, status, created_at) SELECT $1, $2::bigint, $3, $4 FROM serial RETURNING id`;
    const values = [pet.name, pet.categoryId.toString(), pet.status, now];
    return this.db.transaction(async (query) => {
      const { rows } = await query<{ id: string }>(insert, values);
      const created: PetRecord = { id: Number((rows[0] as { id: string }).id), ...pet };
      const response = idempotency.respond(created);
      await query('UPDATE idempotency_keys SET status_code = $1, body = $2 WHERE account_id = $3 AND key = $4', [
        response.statusCode,
        response.body,
        idempotency.accountId,
        idempotency.key,
      ]);
      return created;
    });
  }

  /**
   * Group commit: creations that arrive while a batch is being written go out together in the next
   * one, one statement and one commit for all of them. Creations are serialised by the advisory
   * lock anyway, so this is what lets several requests share the wait for one commit.
   */
  private enqueue(pet: NewPetRecord, now: number): Promise<PetRecord> {
    return new Promise((resolve, reject) => {
      this.queue.push({ pet, now, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const ids = await this.insertBatch(batch);
        batch.forEach((entry, index) => entry.resolve({ id: ids[index] as number, ...entry.pet }));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.flushing = false;
  }

  /** Ids of the inserted rows, in the order of `batch`. */
  private async insertBatch(batch: readonly QueuedCreate[]): Promise<number[]> {
    // Under the lock nothing else draws ids, and rows are inserted in `ord` order, so the batch's
    // ids ascend in input order: sorting them maps each id back to its creation.
    const { rows } = await this.db.query<{ id: string }>(
      `WITH serial AS (SELECT pg_advisory_xact_lock(${lockKey('pets')})),
         input AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) WITH ORDINALITY AS t(name, category_id, status, created_at, ord))
       INSERT INTO pets (name, category_id, status, created_at)
       SELECT input.name, input.category_id, input.status, input.created_at FROM input, serial ORDER BY input.ord
       RETURNING id`,
      [
        batch.map((entry) => entry.pet.name),
        batch.map((entry) => entry.pet.categoryId.toString()),
        batch.map((entry) => entry.pet.status),
        batch.map((entry) => entry.now),
      ],
    );
    if (rows.length !== batch.length) throw new Error(`inserted ${rows.length} pets for ${batch.length} creations`);
    return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  }

  async get(id: number): Promise<PetRecord | undefined> {
    if (!isId(id)) return undefined;
    const { rows } = await this.db.query<PetRow>('SELECT id, name, category_id, status FROM pets WHERE id = $1', [id]);
    return rows[0] ? toPet(rows[0]) : undefined;
  }

  async list(query: PetListQuery): Promise<PetRecord[]> {
    // Ids are safe integers: past 2^53 there is nothing to list, and fractions compare like their floor.
    if (query.afterId >= Number.MAX_SAFE_INTEGER || query.limit <= 0) return [];
    const afterId = Math.max(0, Math.floor(query.afterId) || 0);
    const { rows } =
      query.status === undefined
        ? await this.db.query<PetRow>(
            'SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2',
            [afterId, query.limit],
          )
        : await this.db.query<PetRow>(
            'SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3',
            [query.status, afterId, query.limit],
          );
    return rows.map(toPet);
  }
}

const ACCOUNT_COLUMNS = 'id, name, plan, per_minute, per_day, created_at';

class PostgresAccounts implements AccountStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  async create(account: NewAccount, now: number): Promise<AccountRecord> {
    try {
      const { rows } = await this.db.query<AccountRow>(
        `INSERT INTO accounts (name, plan, per_minute, per_day, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${ACCOUNT_COLUMNS}`,
        [account.name, account.plan, account.perMinute, account.perDay, now],
      );
      return toAccount(rows[0] as AccountRow);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`an account named '${account.name}' already exists`);
      throw error;
    }
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const { rows } = await this.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE name = $1`, [name]);
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    const { rows } = await this.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY id`);
    return rows.map(toAccount);
  }

  async setPlan(
    name: string,
    plan: Plan,
    perMinute: number | null,
    perDay: number | null,
  ): Promise<AccountRecord | undefined> {
    const { rows } = await this.db.query<AccountRow>(
      `UPDATE accounts SET plan = $1, per_minute = $2, per_day = $3 WHERE name = $4 RETURNING ${ACCOUNT_COLUMNS}`,
      [plan, perMinute, perDay, name],
    );
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async count(): Promise<number> {
    const { rows } = await this.db.query<{ count: string }>('SELECT count(*) AS count FROM accounts');
    return Number((rows[0] as { count: string }).count);
  }
}

const KEY_COLUMNS = 'k.id, k.account_id, k.created_at, k.expires_at, k.revoked_at, k.last_used_at';
/** The end of the key's latest unlifted ban, as SQLite computes it. */
const BANNED_UNTIL =
  '(SELECT max(b.until) FROM key_bans b WHERE b.key_id = k.id AND b.lifted_at IS NULL) AS banned_until';

class PostgresKeys implements KeyStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  async create(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    const { rows } = await this.db.query<KeyRow>(
      `INSERT INTO api_keys AS k (id, account_id, hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}, NULL AS banned_until`,
      [key.id, key.accountId, key.hash, now, key.expiresAt],
    );
    return toKey(rows[0] as KeyRow);
  }

  async findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
    const { rows } = await this.db.query<PrincipalRow>(
      `SELECT k.id AS key_id, k.account_id, a.name AS account_name, a.plan, a.per_minute, a.per_day, k.expires_at, k.revoked_at, ${BANNED_UNTIL}
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`,
      [hash],
    );
    const principal = rows[0];
    if (!principal) return undefined;
    return {
      keyId: principal.key_id,
      accountId: Number(principal.account_id),
      accountName: principal.account_name,
      plan: principal.plan,
      perMinute: nullableNumber(principal.per_minute),
      perDay: nullableNumber(principal.per_day),
      expiresAt: nullableNumber(principal.expires_at),
      revokedAt: nullableNumber(principal.revoked_at),
      bannedUntil: nullableNumber(principal.banned_until),
    };
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS}, ${BANNED_UNTIL} FROM api_keys k WHERE k.id = $1`,
      [id],
    );
    return rows[0] ? toKey(rows[0]) : undefined;
  }

  async listForAccount(accountId: number): Promise<ApiKeyRecord[]> {
    if (!isId(accountId)) return [];
    // COLLATE "C": byte order, as SQLite sorts text, whatever the database's collation.
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS}, ${BANNED_UNTIL} FROM api_keys k WHERE k.account_id = $1 ORDER BY k.created_at, k.id COLLATE "C"`,
      [accountId],
    );
    return rows.map(toKey);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const result = await this.db.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2', [
      now,
      id,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * One statement for the whole batch. Rows are visited in key order so that two instances
   * flushing overlapping batches lock them in the same order; a deadlock is retried anyway.
   */
  async recordLastUsed(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const ids = entries.map(([id]) => id);
    const times = entries.map(([, at]) => String(Math.trunc(at)));
    const sql = `UPDATE api_keys k SET last_used_at = greatest(coalesce(k.last_used_at, 0), u.at)
      FROM unnest($1::text[], $2::bigint[]) AS u(id, at) WHERE k.id = u.id`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.db.query(sql, [ids, times]);
        return;
      } catch (error) {
        const deadlock = error instanceof Error && 'code' in error && error.code === '40P01';
        if (!deadlock || attempt >= 3) throw error;
      }
    }
  }
}

class PostgresIdempotency implements IdempotencyStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  /**
   * One atomic upsert claims the key when it is new, or takes over a claim that never completed
   * and is at least `staleAfterMs` old; the row lock of ON CONFLICT makes exactly one of several
   * racing instances win. When nothing was claimed, the row that blocked the claim is read and
   * reported. If it vanished in between (released by its owner), the claim is tried again.
   */
  async reserve(
    scope: IdempotencyScope,
    fingerprint: string,
    now: number,
    staleAfterMs: number,
  ): Promise<IdempotencyReservation> {
    for (let attempt = 1; ; attempt += 1) {
      const claimed = await this.db.query(
        `INSERT INTO idempotency_keys AS i (account_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, status_code = NULL, body = NULL
           WHERE i.status_code IS NULL AND i.created_at <= $5
         RETURNING 1`,
        [scope.accountId, scope.key, fingerprint, now, now - staleAfterMs],
      );
      if ((claimed.rowCount ?? 0) > 0) return { state: 'reserved' };
      const { rows } = await this.db.query<IdempotencyRow>(
        'SELECT fingerprint, created_at, status_code, body FROM idempotency_keys WHERE account_id = $1 AND key = $2',
        [scope.accountId, scope.key],
      );
      const row = rows[0];
      if (row) {
        if (row.status_code !== null && row.body !== null) {
          return {
            state: 'completed',
            fingerprint: row.fingerprint,
            response: { statusCode: row.status_code, body: row.body },
          };
        }
        return { state: 'in_flight', fingerprint: row.fingerprint };
      }
      if (attempt >= 5) return { state: 'in_flight', fingerprint };
    }
  }

  async release(scope: IdempotencyScope): Promise<void> {
    await this.db.query('DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status_code IS NULL', [
      scope.accountId,
      scope.key,
    ]);
  }

  async purge(before: number): Promise<number> {
    const result = await this.db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before]);
    return result.rowCount ?? 0;
  }
}

class PostgresBans implements BanStore {
  private readonly db: Database;
  constructor(db: Database) {
    this.db = db;
  }

  async ban(keyId: string, startedAt: number, until: number): Promise<void> {
    await this.db.query('INSERT INTO key_bans (key_id, started_at, until) VALUES ($1, $2, $3)', [
      keyId,
      startedAt,
      until,
    ]);
  }

  async lift(keyId: string, now: number): Promise<boolean> {
    const result = await this.db.query(
      'UPDATE key_bans SET lifted_at = $1 WHERE key_id = $2 AND lifted_at IS NULL AND until > $1',
      [now, keyId],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async countSince(keyId: string, since: number): Promise<number> {
    const { rows } = await this.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM key_bans WHERE key_id = $1 AND started_at >= $2',
      [keyId, since],
    );
    return Number((rows[0] as { count: string }).count);
  }
}
