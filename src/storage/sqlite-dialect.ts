import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  Kysely,
  sql,
  SqliteAdapter,
  SqliteDialect,
  type Compilable,
  type DialectAdapter,
  type Driver,
  type Insertable,
} from 'kysely';
import type { DatabaseSchema, IdempotencyKeysTable, IntegerValue, PetsTable } from './database-schema.ts';
import { petRowOf } from './pet-columns.ts';
import { applyMigrations, type MigrationDialect } from './migrations.ts';
import {
  completedOutcome,
  findIdempotency,
  idempotencyRowOf,
  insertPets,
  SqlStore,
  storeIdempotencies,
  type Database,
  type IdempotencyRow,
  type PetCommitter,
  type StoreDialect,
} from './sql-store.ts';
import {
  FIRST_RETRY_MS,
  isBusy,
  keptRead,
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
import type { IdempotencyScope, IdempotentCreate, IdempotentOutcome } from '../domain/pet-store.ts';
import type { Store } from '../domain/store.ts';

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
    keepRead: (query) => keptRead(connections, query),
    writeInBackground: async (statements, mode) => {
      if (mode === 'if-idle') return writeIfIdle(connections, statements);
      await writeWaiting(connections, statements);
      return true;
    },
    migrate: (through) => oneMigrationAtATime(() => applyMigrations({ db, dialect: sqliteMigrationDialect, through })),
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
  backend: 'sqlite',
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
 * Most creations one transaction commits; more wait for the next, committed at once after it. Its
 * values, 6 per record at most, stay far below SQLite's 32766 bound parameters per statement.
 */
const MAX_BATCH = 128;

/**
 * Creations that arrive in the same event-loop turn share one transaction and so one fsync. Each
 * caller still resolves only after the commit that holds its row. A creation with an idempotency
 * key looks its key up and stores its response in that same transaction: the single writer is the
 * lock on the key, so a concurrent request with the same key, in this batch or a later one, finds
 * the completed record and replays it.
 *
 * A batch writes its pets with multi-row INSERTs, and its completed records with others, each SQL
 * text built by Kysely once per power of two of rows (KeptStatement): building and compiling an
 * insert per creation took a tenth of the busy CPU under a stream of creations.
 *
 * While another process holds the file's write lock, the batch stays queued and BEGIN IMMEDIATE is
 * retried on a timer, never in a blocking call; later creations join it. A creation still queued at
 * its deadline is dropped from the queue and fails with StorageUnavailableError: since commits are
 * synchronous, a creation is either committed and resolved, or still queued, never in between.
 */
class SqliteGroupCommit implements PetCommitter {
  private readonly connections: SqliteConnections;
  private readonly database: NodeSqliteDatabase;
  private readonly findRecord: KeptStatement<IdempotencyScope, IdempotencyRow>;
  private readonly insertPets: KeptStatement<Insertable<PetsTable>, { id: IntegerValue }>;
  private readonly storeRecords: KeptStatement<Insertable<IdempotencyKeysTable>, unknown>;
  private pending: PendingCreate[] = [];
  private flushing: Promise<void> | undefined;

  constructor(db: Database, connections: SqliteConnections) {
    this.connections = connections;
    this.database = connections.writer;
    this.findRecord = new KeptStatement(
      this.database,
      (scopes) => findIdempotency(db, onlyOne(scopes)),
      (scope) => [scope.accountId, scope.key],
    );
    // A row's values in the order of its keys, which is the order Kysely lists its columns in.
    this.insertPets = new KeptStatement(
      this.database,
      (rows: readonly Insertable<PetsTable>[]) => insertPets(db, rows),
      Object.values,
    );
    this.storeRecords = new KeptStatement(
      this.database,
      (rows: readonly Insertable<IdempotencyKeysTable>[]) => storeIdempotencies(db, rows),
      Object.values,
    );
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
    const batch = this.pending.splice(0, MAX_BATCH);
    let outcomes: IdempotentOutcome[];
    try {
      outcomes = this.write(batch);
      this.database.exec('COMMIT');
    } catch (error) {
      if (this.database.inTransaction) this.database.exec('ROLLBACK');
      for (const entry of batch) settle(entry, () => entry.reject(error));
      return true;
    }
    batch.forEach((entry, index) => settle(entry, () => entry.resolve(outcomes[index] as IdempotentOutcome)));
    return true;
  }

  /**
   * Runs inside the batch's transaction, each statement synchronously, never awaited: a lookup per
   * key, then the INSERTs of the batch's pets and of its completed records. A key that an
   * earlier creation of the batch takes replays that creation's response, as its lookup would have
   * found it had the two been written one after the other. Outcomes are in the order of `batch`.
   */
  private write(batch: readonly PendingCreate[]): IdempotentOutcome[] {
    const found = new Map<PendingCreate, IdempotentOutcome>();
    const creators: PendingCreate[] = [];
    const creatorOfKey = new Map<string, PendingCreate>();
    const sameKeyAs = new Map<PendingCreate, PendingCreate>();
    for (const entry of batch) {
      const request = entry.request;
      if (request) {
        const scope = scopeKey(request);
        const creator = creatorOfKey.get(scope);
        if (creator) {
          sameKeyAs.set(entry, creator);
          continue;
        }
        const completed = completedOutcome(this.findRecord.rowsNow([request])[0]);
        if (completed) {
          found.set(entry, completed);
          continue;
        }
        creatorOfKey.set(scope, entry);
      }
      creators.push(entry);
    }
    const ids = this.insertIds(creators);
    const records: Insertable<IdempotencyKeysTable>[] = [];
    /** What a later creation with a creator's key replays: its own response. */
    const replays = new Map<PendingCreate, IdempotentOutcome>();
    creators.forEach((entry, index) => {
      const pet: PetRecord = { id: ids[index] as number, ...entry.pet };
      found.set(entry, { state: 'created', pet });
      if (!entry.request) return;
      const request = entry.request;
      const { statusCode, body } = request.respond(pet);
      records.push(idempotencyRowOf(request, entry.now, { statusCode, body }));
      replays.set(entry, { state: 'completed', fingerprint: request.fingerprint, response: { statusCode, body } });
    });
    if (records.length > 0) this.storeRecords.rowsNow(records);
    return batch.map((entry) => {
      const creator = sameKeyAs.get(entry);
      const outcome = creator ? replays.get(creator) : found.get(entry);
      if (!outcome) throw new Error('a creation of the batch has no outcome');
      return outcome;
    });
  }

  /** The ids of the creators' new pets, in the order of `creators`. */
  private insertIds(creators: readonly PendingCreate[]): number[] {
    if (creators.length === 0) return [];
    const rows = this.insertPets.rowsNow(creators.map((entry) => petRowOf(entry.pet, entry.now)));
    if (rows.length !== creators.length) {
      throw new Error(`inserted ${rows.length} pets for ${creators.length} creations`);
    }
    // RETURNING's order is not documented, ids are: in the transaction of the only writer,
    // AUTOINCREMENT gives each row, in the order VALUES lists them, an id above every earlier one.
    // Sorted, the ids follow `creators`, as PostgreSQL's batch does under its lock.
    return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
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

/** One string per (account, key): an account id is digits, so the first ':' ends it. */
const scopeKey = (scope: IdempotencyScope): string => `${scope.accountId}:${scope.key}`;

function onlyOne<T>(items: readonly T[]): T {
  const [item] = items;
  if (items.length !== 1 || item === undefined) throw new Error(`one item expected, got ${items.length}`);
  return item;
}

/**
 * A statement of the group commit whose SQL Kysely builds once per count of inputs, then keeps:
 * later calls only bind their values, flattened input by input by `valuesOf`. Whenever SQL is
 * built, Kysely's own values for it are compared with that flattening, so the two orders cannot
 * drift apart unnoticed.
 *
 * Inputs go out in runs of a power of two (37 rows: 32, 4 and 1), so at most eight texts are kept
 * and prepared, one per power up to MAX_BATCH. A text per count instead kept 128 of each statement,
 * about 10 MB of prepared statements in SQLite's memory, for one statement less per batch.
 */
class KeptStatement<Input, Row> {
  private readonly database: NodeSqliteDatabase;
  private readonly build: (inputs: readonly Input[]) => Compilable<Row>;
  private readonly valuesOf: (input: Input) => readonly unknown[];
  private readonly texts = new Map<number, string>();

  constructor(
    database: NodeSqliteDatabase,
    build: (inputs: readonly Input[]) => Compilable<Row>,
    valuesOf: (input: Input) => readonly unknown[],
  ) {
    this.database = database;
    this.build = build;
    this.valuesOf = valuesOf;
  }

  /** Runs it at once on the writer: for the transaction of a batch, which must not yield. */
  rowsNow(inputs: readonly Input[]): Row[] {
    const rows: Row[] = [];
    for (let start = 0; start < inputs.length;) {
      const run = inputs.slice(start, start + largestPowerOfTwoUpTo(inputs.length - start));
      const parameters = run.flatMap((input) => this.valuesOf(input));
      rows.push(...this.database.rowsNow<Row>({ sql: this.textFor(run, parameters), parameters }));
      start += run.length;
    }
    return rows;
  }

  private textFor(inputs: readonly Input[], parameters: readonly unknown[]): string {
    const kept = this.texts.get(inputs.length);
    if (kept !== undefined) return kept;
    const compiled = this.build(inputs).compile();
    const same =
      compiled.parameters.length === parameters.length &&
      compiled.parameters.every((value, index) => Object.is(value, parameters[index]));
    if (!same) throw new Error(`values bound out of the order of their SQL: ${compiled.sql}`);
    this.texts.set(inputs.length, compiled.sql);
    return compiled.sql;
  }
}

function largestPowerOfTwoUpTo(count: number): number {
  return 2 ** Math.floor(Math.log2(count));
}
