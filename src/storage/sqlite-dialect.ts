import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, sql, SqliteAdapter, SqliteDialect, type DialectAdapter, type Driver } from 'kysely';
import type { DatabaseSchema, IntegerValue } from './database-schema.ts';
import { migrateToLatest, type MigrationDialect } from './migrations.ts';
import {
  completedOutcome,
  findIdempotency,
  insertPet,
  SqlStore,
  storeIdempotency,
  type Database,
  type PetCommitter,
  type StoreDialect,
} from './sql-store.ts';
import {
  FIRST_RETRY_MS,
  isBusy,
  lockedError,
  LONGEST_RETRY_MS,
  NodeSqliteDatabase,
  NodeSqliteDriver,
  sleep,
  writeIfIdle,
  writeWaiting,
  WriterLock,
  type SqliteConnections,
} from './sqlite-connections.ts';
import type { NewPetRecord, PetRecord } from '../domain/pet.ts';
import type { IdempotentCreate, IdempotentOutcome, Store } from './store.ts';

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit is on disk
 * before a 201 is sent. node:sqlite is synchronous; its statements answer in microseconds, faster
 * than any async driver round trip, and they are prepared once and reused.
 */
export function openSqliteStore(path: string, options: { readonly timeoutMs: number }): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const writer = openConnection(path);
  enableWal(writer);
  const database = new NodeSqliteDatabase(writer);
  const connections: SqliteConnections = {
    writer: database,
    reader: path === ':memory:' ? database : new NodeSqliteDatabase(openConnection(path)),
    writerLock: new WriterLock(),
    timeoutMs: options.timeoutMs,
  };
  const db = new Kysely<DatabaseSchema>({ dialect: new NodeSqliteDialect(connections) });
  return new SqlStore({
    backend: 'sqlite',
    db,
    pets: new SqliteGroupCommit(db, connections),
    isUniqueViolation: (error) => error instanceof Error && /UNIQUE constraint failed/.test(error.message),
    writeInBackground: async (statements, mode) => {
      if (mode === 'if-idle') return writeIfIdle(connections, statements);
      await writeWaiting(connections, statements);
      return true;
    },
    migrate: () => oneMigrationAtATime(() => migrateToLatest({ db, dialect: sqliteMigrationDialect })),
    destroy: () => db.destroy(),
  } satisfies StoreDialect);
}

/**
 * No busy timeout: node:sqlite would sleep in the event loop's thread for it. A statement that
 * finds the file locked fails at once and is retried on a timer (sqlite-connections.ts).
 */
function openConnection(path: string): DatabaseSync {
  const connection = new DatabaseSync(path, { timeout: 0 });
  connection.exec('PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
  return connection;
}

/** How long opening waits for another process that is switching a new file to WAL. */
const OPEN_WAIT_MS = 5000;

/**
 * Switching a new file to WAL can report SQLITE_BUSY while another process does the same. This runs
 * once, while the store is opened at start-up, before anything is served; so it may wait here.
 */
function enableWal(connection: DatabaseSync): void {
  const deadline = Date.now() + OPEN_WAIT_MS;
  for (;;) {
    try {
      connection.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

let migrationsInProcess: Promise<unknown> = Promise.resolve();

/**
 * Serialises the migrations of this process's SQLite stores: while another store of this process
 * held the file's write lock between two awaited statements, a second migration would only retry
 * until its deadline and fail. Other processes wait for the lock as usual.
 */
function oneMigrationAtATime(migrate: () => Promise<number>): Promise<number> {
  const run = migrationsInProcess.then(migrate);
  migrationsInProcess = run.catch(() => undefined);
  return run;
}

const sqliteMigrationDialect: MigrationDialect = {
  integerType: 'integer',
  generatedId: (column) => column.primaryKey().autoIncrement(),
  async tableExists(db, table) {
    const { rows } = await sql<{ found: IntegerValue }>`
      SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = ${table}`.execute(db);
    return Number(rows[0]?.found ?? 0) > 0;
  },
};

// ---------------------------------------------------------------------------------------------
// node:sqlite under Kysely's SqliteDialect

/**
 * SqliteDialect with two changes. The driver (sqlite-connections.ts) never waits for a lock inside
 * a synchronous call, and starts transactions with BEGIN IMMEDIATE: a deferred one that reads and
 * then writes fails with SQLITE_BUSY, for good, when another connection wrote in between. And DDL
 * is transactional (it is in SQLite), so migrations run in one transaction: a failing one leaves
 * nothing behind, and the write lock keeps instances migrating together from applying anything twice.
 */
class NodeSqliteDialect extends SqliteDialect {
  private readonly connections: SqliteConnections;
  constructor(connections: SqliteConnections) {
    super({ database: connections.writer });
    this.connections = connections;
  }

  override createDriver(): Driver {
    return new NodeSqliteDriver(this.connections);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }
}

class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  // With false, Kysely lends one connection at a time: every read waited out a transaction retrying a locked file.
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Group commit

interface PendingCreate {
  readonly pet: NewPetRecord;
  readonly now: number;
  readonly request: IdempotentCreate | undefined;
  /** Ends the wait at the storage deadline while the creation is still queued. */
  readonly timer: NodeJS.Timeout;
  resolve(outcome: IdempotentOutcome): void;
  reject(error: unknown): void;
}

/**
 * Creations that arrive in the same event-loop turn share one transaction and so one fsync. Each
 * caller still resolves only after the commit that holds its row. A creation with an idempotency
 * key looks its key up and stores its response in that same transaction: the single writer is the
 * lock on the key, so a concurrent request with the same key, in this batch or a later one, finds
 * the completed record and replays it.
 *
 * While another process holds the file's write lock, the batch stays queued and BEGIN IMMEDIATE is
 * retried on a timer, never in a blocking call; later creations join it. A creation still queued at
 * its deadline is dropped from the queue and fails with StorageUnavailableError: since commits are
 * synchronous, a creation is either committed and resolved, or still queued, never in between.
 */
class SqliteGroupCommit implements PetCommitter {
  private readonly db: Database;
  private readonly connections: SqliteConnections;
  private readonly database: NodeSqliteDatabase;
  private pending: PendingCreate[] = [];
  private flushing: Promise<void> | undefined;

  constructor(db: Database, connections: SqliteConnections) {
    this.db = db;
    this.connections = connections;
    this.database = connections.writer;
  }

  async create(pet: NewPetRecord, now: number): Promise<PetRecord> {
    const outcome = await this.enqueue(pet, now, undefined);
    if (outcome.state !== 'created') throw new Error('a creation without a key replayed a response');
    return outcome.pet;
  }

  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return this.enqueue(pet, now, request);
  }

  async drain(): Promise<void> {
    await this.flushing;
  }

  private enqueue(pet: NewPetRecord, now: number, request: IdempotentCreate | undefined): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) => {
      const entry: PendingCreate = {
        pet,
        now,
        request,
        timer: setTimeout(() => this.expire(entry), this.connections.timeoutMs),
        resolve,
        reject,
      };
      this.pending.push(entry);
      this.flushing ??= new Promise<void>((next) => setImmediate(next)).then(() => this.flush());
    });
  }

  private expire(entry: PendingCreate): void {
    const index = this.pending.indexOf(entry);
    if (index < 0) return;
    this.pending.splice(index, 1);
    entry.reject(lockedError());
  }

  /**
   * Holds the writer of this process (no transaction of another caller is open on it), then writes
   * each batch without yielding; only a locked file makes it wait, on a timer.
   */
  private async flush(): Promise<void> {
    const release = await this.connections.writerLock.acquire();
    try {
      let delay = FIRST_RETRY_MS;
      while (this.pending.length > 0) {
        if (this.commitPending()) {
          delay = FIRST_RETRY_MS;
          continue;
        }
        await sleep(delay);
        delay = Math.min(delay * 2, LONGEST_RETRY_MS);
      }
    } finally {
      release();
      this.flushing = undefined;
    }
  }

  /** False when the file is locked by another writer: the batch stays queued. */
  private commitPending(): boolean {
    try {
      this.database.exec('BEGIN IMMEDIATE');
    } catch (error) {
      if (isBusy(error)) return false;
      this.settleAll((entry) => entry.reject(error));
      return true;
    }
    const batch = this.pending;
    this.pending = [];
    const outcomes: IdempotentOutcome[] = [];
    try {
      for (const entry of batch) outcomes.push(this.apply(entry));
      this.database.exec('COMMIT');
    } catch (error) {
      if (this.database.inTransaction) this.database.exec('ROLLBACK');
      for (const entry of batch) settle(entry, () => entry.reject(error));
      return true;
    }
    batch.forEach((entry, index) => settle(entry, () => entry.resolve(outcomes[index] as IdempotentOutcome)));
    return true;
  }

  /** Runs inside the batch's transaction: each query is compiled and run synchronously, never awaited. */
  private apply(entry: PendingCreate): IdempotentOutcome {
    const request = entry.request;
    if (request) {
      const completed = completedOutcome(this.database.rowsNow(findIdempotency(this.db, request).compile())[0]);
      if (completed) return completed;
    }
    const [row] = this.database.rowsNow(insertPet(this.db, entry.pet, entry.now).compile());
    if (!row) throw new Error('INSERT … RETURNING returned no row');
    const pet: PetRecord = { id: Number(row.id), ...entry.pet };
    if (request) {
      this.database.rowsNow(storeIdempotency(this.db, request, entry.now, request.respond(pet)).compile());
    }
    return { state: 'created', pet };
  }

  private settleAll(how: (entry: PendingCreate) => void): void {
    const batch = this.pending;
    this.pending = [];
    for (const entry of batch) settle(entry, () => how(entry));
  }
}

function settle(entry: PendingCreate, how: () => void): void {
  clearTimeout(entry.timer);
  how();
}
