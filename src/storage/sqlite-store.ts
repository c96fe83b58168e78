import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ConflictError } from '../errors.ts';
import { sqliteMigrations } from './sqlite-migrations.ts';
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

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit is on disk
 * before a 201 is sent. node:sqlite is synchronous; every query here is a prepared statement that
 * answers in microseconds, which is faster than any async driver round trip.
 */
export function openSqliteStore(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  // The busy timeout comes first, so that opening while a CLI command or another process holds a
  // lock waits for it instead of failing with "database is locked".
  const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  enableWal(db);
  db.exec('PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
  return new SqliteStore(db);
}

const BUSY_TIMEOUT_MS = 5000;

/** Switching a new file to WAL can report SQLITE_BUSY without calling the busy handler: retry. */
function enableWal(db: DatabaseSync): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!(error instanceof Error && /locked|busy/i.test(error.message)) || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** [id, name, category_id, status]: pet statements return arrays, cheaper to build than objects. */
type PetRow = [id: bigint, name: string, categoryId: bigint, status: PetStatus | null];

interface AccountRow {
  id: number;
  name: string;
  plan: Plan;
  per_minute: number | null;
  per_day: number | null;
  created_at: number;
}

interface KeyRow {
  id: string;
  account_id: number;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  banned_until: number | null;
}

interface PrincipalRow {
  key_id: string;
  account_id: number;
  account_name: string;
  plan: Plan;
  per_minute: number | null;
  per_day: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  banned_until: number | null;
}

interface IdempotencyRow {
  fingerprint: string;
  created_at: number;
  status_code: number | null;
  body: string | null;
}

const toPet = (row: PetRow): PetRecord => ({ id: Number(row[0]), name: row[1], categoryId: row[2], status: row[3] });

const PET_COLUMNS = 'SELECT id, name, category_id, status FROM pets';

const toAccount = (row: AccountRow): AccountRecord => ({
  id: row.id,
  name: row.name,
  plan: row.plan,
  perMinute: row.per_minute,
  perDay: row.per_day,
  createdAt: row.created_at,
});

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.account_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
  bannedUntil: row.banned_until,
});

const BANNED_UNTIL =
  '(SELECT max(b.until) FROM key_bans b WHERE b.key_id = k.id AND b.lifted_at IS NULL) AS banned_until';

/** Prepared statements, prepared on first use: the tables may not exist until migrate() ran. */
class Statements {
  private readonly db: DatabaseSync;
  private readonly prepared = new Map<string, StatementSync>();
  constructor(db: DatabaseSync) {
    this.db = db;
  }
  get(sql: string, readBigInts = false): StatementSync {
    let statement = this.prepared.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      statement.setReadBigInts(readBigInts);
      this.prepared.set(sql, statement);
    }
    return statement;
  }

  /** Pet rows as arrays with exact (bigint) integers. */
  pets(sql: string): StatementSync {
    let statement = this.prepared.get(sql);
    if (!statement) {
      statement = this.get(sql, true);
      statement.setReturnArrays(true);
    }
    return statement;
  }
}

function rowAs<T>(row: unknown): T {
  return row as T;
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message);
}

type PendingCreate = {
  pet: NewPetRecord;
  now: number;
  idempotency: (IdempotencyScope & { respond(pet: PetRecord): IdempotentResponse }) | undefined;
  resolve(pet: PetRecord): void;
  reject(error: unknown): void;
};

class SqliteStore implements Store {
  readonly backend = 'sqlite';
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  private readonly db: DatabaseSync;
  private readonly petStore: SqlitePets;

  constructor(db: DatabaseSync) {
    this.db = db;
    this.petStore = new SqlitePets(db);
    this.pets = this.petStore;
    this.accounts = new SqliteAccounts(db);
    this.keys = new SqliteKeys(db);
    this.idempotency = new SqliteIdempotency(db);
    this.bans = new SqliteBans(db);
  }

  async migrate(): Promise<number> {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    // IMMEDIATE takes the write lock first, so a CLI and a server starting together cannot both apply.
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const applied = new Set(
        this.db
          .prepare('SELECT version FROM schema_migrations')
          .all()
          .map((row) => Number(row.version)),
      );
      let count = 0;
      for (const migration of sqliteMigrations) {
        if (applied.has(migration.version)) continue;
        this.db.exec(migration.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, Date.now());
        count += 1;
      }
      this.db.exec('COMMIT');
      return count;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.petStore.drain();
    if (this.db.isOpen) this.db.close();
  }
}

class SqlitePets implements PetStore {
  private readonly db: DatabaseSync;
  private readonly statements: Statements;
  private pending: PendingCreate[] = [];

  constructor(db: DatabaseSync) {
    this.db = db;
    this.statements = new Statements(db);
  }

  /**
   * Group commit: creations that arrive in the same event-loop turn share one transaction and so
   * one fsync. Each caller still resolves only after the commit that holds its row.
   */
  create(pet: NewPetRecord, now: number, idempotency?: PendingCreate['idempotency']): Promise<PetRecord> {
    return new Promise((resolve, reject) => {
      this.pending.push({ pet, now, idempotency, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Commits whatever is queued now, so closing never drops an accepted creation. */
  drain(): void {
    this.flush();
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const created: Array<{ entry: PendingCreate; pet: PetRecord }> = [];
    try {
      const insert = this.statements.get(
        'INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?) RETURNING id',
        true,
      );
      const complete = this.statements.get(
        'UPDATE idempotency_keys SET status_code = ?, body = ? WHERE account_id = ? AND key = ?',
      );
      this.db.exec('BEGIN IMMEDIATE');
      for (const entry of batch) {
        const row = rowAs<{ id: bigint }>(
          insert.get(entry.pet.name, entry.pet.categoryId, entry.pet.status, entry.now),
        );
        const pet: PetRecord = { id: Number(row.id), ...entry.pet };
        if (entry.idempotency) {
          const response = entry.idempotency.respond(pet);
          complete.run(response.statusCode, response.body, entry.idempotency.accountId, entry.idempotency.key);
        }
        created.push({ entry, pet });
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const { entry, pet } of created) entry.resolve(pet);
  }

  async get(id: number): Promise<PetRecord | undefined> {
    const row = this.statements.pets(`${PET_COLUMNS} WHERE id = ?`).get(id);
    return row ? toPet(rowAs<PetRow>(row)) : undefined;
  }

  async list(query: PetListQuery): Promise<PetRecord[]> {
    // LIMIT is written into the SQL (one cached statement per value, at most 101): a bound LIMIT
    // makes SQLite re-prepare the statement on every call, which cost a third of a list request.
    const limit = Math.trunc(query.limit);
    const rows =
      query.status === undefined
        ? this.statements.pets(`${PET_COLUMNS} WHERE id > ? ORDER BY id LIMIT ${limit}`).all(query.afterId)
        : this.statements
            .pets(`${PET_COLUMNS} WHERE status = ? AND id > ? ORDER BY id LIMIT ${limit}`)
            .all(query.status, query.afterId);
    return rows.map((row) => toPet(rowAs<PetRow>(row)));
  }
}

class SqliteAccounts implements AccountStore {
  private readonly db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.db = db;
  }

  async create(account: NewAccount, now: number): Promise<AccountRecord> {
    try {
      const row = this.db
        .prepare(
          'INSERT INTO accounts (name, plan, per_minute, per_day, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
        )
        .get(account.name, account.plan, account.perMinute, account.perDay, now);
      return toAccount(rowAs<AccountRow>(row));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`an account named '${account.name}' already exists`);
      throw error;
    }
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM accounts WHERE name = ?').get(name);
    return row ? toAccount(rowAs<AccountRow>(row)) : undefined;
  }

  async list(): Promise<AccountRecord[]> {
    return this.db
      .prepare('SELECT * FROM accounts ORDER BY id')
      .all()
      .map((row) => toAccount(rowAs<AccountRow>(row)));
  }

  async setPlan(
    name: string,
    plan: Plan,
    perMinute: number | null,
    perDay: number | null,
  ): Promise<AccountRecord | undefined> {
    const row = this.db
      .prepare('UPDATE accounts SET plan = ?, per_minute = ?, per_day = ? WHERE name = ? RETURNING *')
      .get(plan, perMinute, perDay, name);
    return row ? toAccount(rowAs<AccountRow>(row)) : undefined;
  }

  async count(): Promise<number> {
    return Number(rowAs<{ count: number }>(this.db.prepare('SELECT count(*) AS count FROM accounts').get()).count);
  }
}

class SqliteKeys implements KeyStore {
  private readonly db: DatabaseSync;
  private readonly statements: Statements;
  constructor(db: DatabaseSync) {
    this.db = db;
    this.statements = new Statements(db);
  }

  async create(key: NewApiKey, now: number): Promise<ApiKeyRecord> {
    const row = this.db
      .prepare(
        'INSERT INTO api_keys (id, account_id, hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING *, NULL AS banned_until',
      )
      .get(key.id, key.accountId, key.hash, now, key.expiresAt);
    return toKey(rowAs<KeyRow>(row));
  }

  async findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined> {
    const row = this.statements
      .get(
        `SELECT k.id AS key_id, k.account_id, a.name AS account_name, a.plan, a.per_minute, a.per_day, k.expires_at, k.revoked_at, ${BANNED_UNTIL}
           FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`,
      )
      .get(hash);
    if (!row) return undefined;
    const principal = rowAs<PrincipalRow>(row);
    return {
      keyId: principal.key_id,
      accountId: principal.account_id,
      accountName: principal.account_name,
      plan: principal.plan,
      perMinute: principal.per_minute,
      perDay: principal.per_day,
      expiresAt: principal.expires_at,
      revokedAt: principal.revoked_at,
      bannedUntil: principal.banned_until,
    };
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.db.prepare(`SELECT k.*, ${BANNED_UNTIL} FROM api_keys k WHERE k.id = ?`).get(id);
    return row ? toKey(rowAs<KeyRow>(row)) : undefined;
  }

  async listForAccount(accountId: number): Promise<ApiKeyRecord[]> {
    return this.db
      .prepare(`SELECT k.*, ${BANNED_UNTIL} FROM api_keys k WHERE k.account_id = ? ORDER BY k.created_at, k.id`)
      .all(accountId)
      .map((row) => toKey(rowAs<KeyRow>(row)));
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?')
      .run(now, id);
    return Number(result.changes) > 0;
  }

  async recordLastUsed(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    const update = this.db.prepare('UPDATE api_keys SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?');
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const [id, at] of lastUsed) update.run(at, id);
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }
}

class SqliteIdempotency implements IdempotencyStore {
  private readonly db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.db = db;
  }

  async reserve(
    scope: IdempotencyScope,
    fingerprint: string,
    now: number,
    staleAfterMs: number,
  ): Promise<IdempotencyReservation> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const existing = this.db
        .prepare(
          'SELECT fingerprint, created_at, status_code, body FROM idempotency_keys WHERE account_id = ? AND key = ?',
        )
        .get(scope.accountId, scope.key);
      let reservation: IdempotencyReservation = { state: 'reserved' };
      if (existing) {
        const row = rowAs<IdempotencyRow>(existing);
        if (row.status_code !== null && row.body !== null) {
          reservation = {
            state: 'completed',
            fingerprint: row.fingerprint,
            response: { statusCode: row.status_code, body: row.body },
          };
        } else if (now - row.created_at < staleAfterMs) {
          reservation = { state: 'in_flight', fingerprint: row.fingerprint };
        }
      }
      if (reservation.state === 'reserved') {
        this.db
          .prepare(
            'INSERT OR REPLACE INTO idempotency_keys (account_id, key, fingerprint, created_at) VALUES (?, ?, ?, ?)',
          )
          .run(scope.accountId, scope.key, fingerprint, now);
      }
      this.db.exec('COMMIT');
      return reservation;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async release(scope: IdempotencyScope): Promise<void> {
    this.db
      .prepare('DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND status_code IS NULL')
      .run(scope.accountId, scope.key);
  }

  async purge(before: number): Promise<number> {
    return Number(this.db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?').run(before).changes);
  }
}

class SqliteBans implements BanStore {
  private readonly db: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.db = db;
  }

  async ban(keyId: string, startedAt: number, until: number): Promise<void> {
    this.db.prepare('INSERT INTO key_bans (key_id, started_at, until) VALUES (?, ?, ?)').run(keyId, startedAt, until);
  }

  async lift(keyId: string, now: number): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE key_bans SET lifted_at = ? WHERE key_id = ? AND lifted_at IS NULL AND until > ?')
      .run(now, keyId, now);
    return Number(result.changes) > 0;
  }

  async countSince(keyId: string, since: number): Promise<number> {
    const row = rowAs<{ count: number }>(
      this.db.prepare('SELECT count(*) AS count FROM key_bans WHERE key_id = ? AND started_at >= ?').get(keyId, since),
    );
    return Number(row.count);
  }
}
