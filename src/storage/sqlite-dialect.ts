import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  Kysely,
  sql,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type Compilable,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely';
import type { DatabaseSchema, IntegerValue } from './database-schema.ts';
import { migrateToLatest, type MigrationDialect } from './migrations.ts';
import {
  completeIdempotency,
  insertPet,
  SqlStore,
  type Database,
  type PetCommitter,
  type PetIdempotency,
  type StoreDialect,
} from './sql-store.ts';
import type { IdempotencyScope, IdempotentResponse, NewPetRecord, PetRecord, Store } from './store.ts';

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit is on disk
 * before a 201 is sent. node:sqlite is synchronous; its statements answer in microseconds, faster
 * than any async driver round trip, and they are prepared once and reused.
 */
export function openSqliteStore(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  // The busy timeout comes first, so that opening while a CLI command or another process holds a
  // lock waits for it instead of failing with "database is locked".
  const connection = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
  enableWal(connection);
  connection.exec('PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
  const database = new NodeSqliteDatabase(connection);
  const db = new Kysely<DatabaseSchema>({ dialect: new NodeSqliteDialect({ database }) });
  return new SqlStore({
    backend: 'sqlite',
    db,
    pets: new SqliteGroupCommit(db, database),
    isUniqueViolation: (error) => error instanceof Error && /UNIQUE constraint failed/.test(error.message),
    migrate: () => oneMigrationAtATime(() => migrateToLatest({ db, dialect: sqliteMigrationDialect })),
    destroy: () => db.destroy(),
  } satisfies StoreDialect);
}

const BUSY_TIMEOUT_MS = 5000;

/** Switching a new file to WAL can report SQLITE_BUSY without calling the busy handler: retry. */
function enableWal(connection: DatabaseSync): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      connection.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!(error instanceof Error && /locked|busy/i.test(error.message)) || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

let migrationsInProcess: Promise<unknown> = Promise.resolve();

/**
 * Serialises the migrations of this process's SQLite stores. A connection waiting for the write
 * lock blocks the whole thread (node:sqlite's busy handler sleeps), so while another store of this
 * process held the lock between two awaited statements, it would block the very migration it
 * waits for. Other processes are unaffected and wait for the lock as usual.
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

/** Statements kept prepared; the query set is fixed (LIMIT values included), this only bounds it. */
const MAX_CACHED_STATEMENTS = 1000;

/**
 * Adapts `DatabaseSync` to the better-sqlite3-like object SqliteDialect drives. Every statement
 * reads integers as bigints, so an int64 `category_id` beyond 2^53 comes back digit for digit;
 * the row mappers turn ids, counts and times into numbers.
 */
class NodeSqliteDatabase implements SqliteDatabase {
  private readonly connection: DatabaseSync;
  private readonly statements = new Map<string, SqliteStatement>();

  constructor(connection: DatabaseSync) {
    this.connection = connection;
  }

  prepare(text: string): SqliteStatement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = adaptStatement(this.connection.prepare(text));
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      this.statements.set(text, statement);
    }
    return statement;
  }

  /** Runs a statement at once, for work that must not yield (the group commit). */
  rowsNow<Row>(query: PrecompiledQuery<Row>): Row[] {
    return this.prepare(query.sql).all(query.parameters) as Row[];
  }

  exec(text: string): void {
    this.connection.exec(text);
  }

  get inTransaction(): boolean {
    return this.connection.isTransaction;
  }

  close(): void {
    this.statements.clear();
    if (this.connection.isOpen) this.connection.close();
  }
}

function adaptStatement(statement: StatementSync): SqliteStatement {
  statement.setReadBigInts(true);
  const values = (parameters: readonly unknown[]): SQLInputValue[] => parameters as SQLInputValue[];
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...values(parameters)),
    run: (parameters) => statement.run(...values(parameters)),
    iterate: (parameters) => statement.iterate(...values(parameters)),
  };
}

/**
 * SqliteDialect with two changes. Transactions start with BEGIN IMMEDIATE: a deferred one that
 * reads and then writes fails with SQLITE_BUSY, without waiting, when another connection (a CLI,
 * a second instance) wrote in between; taking the write lock first makes it wait for the busy
 * timeout instead. And DDL is transactional (it is in SQLite), so migrations run in one
 * transaction: a failing one leaves nothing behind, and the write lock keeps instances migrating
 * together from applying anything twice.
 */
class NodeSqliteDialect extends SqliteDialect {
  private readonly settings: SqliteDialectConfig;
  constructor(settings: SqliteDialectConfig) {
    super(settings);
    this.settings = settings;
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.settings);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }
}

class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }
}

class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Group commit

interface PrecompiledQuery<Row> {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  /** Only carries the row type. */
  readonly row?: Row;
}

/**
 * Compiles a query once and binds each call's values in the order `parameters` lists them:
 * building and compiling a Kysely query per row cost about as much as the commits themselves
 * (~30 µs a row). Compiling a sample checks that order is the one Kysely binds in.
 */
function precompile<Args, Row>(
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

interface CreateArgs {
  readonly pet: NewPetRecord;
  readonly now: number;
}

interface CompleteArgs {
  readonly scope: IdempotencyScope;
  readonly response: IdempotentResponse;
}

interface PendingCreate {
  readonly pet: NewPetRecord;
  readonly now: number;
  readonly idempotency: PetIdempotency | undefined;
  resolve(pet: PetRecord): void;
  reject(error: unknown): void;
}

/**
 * Creations that arrive in the same event-loop turn share one transaction and so one fsync. Each
 * caller still resolves only after the commit that holds its row. A creation with an idempotency
 * key completes its record in that same transaction.
 */
class SqliteGroupCommit implements PetCommitter {
  private readonly db: Database;
  private readonly database: NodeSqliteDatabase;
  private readonly insertStatement: (args: CreateArgs) => PrecompiledQuery<{ id: IntegerValue }>;
  private readonly completeStatement: (args: CompleteArgs) => PrecompiledQuery<unknown>;
  private pending: PendingCreate[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(db: Database, database: NodeSqliteDatabase) {
    this.db = db;
    this.database = database;
    this.insertStatement = precompile<CreateArgs, { id: IntegerValue }>(
      ({ pet, now }: CreateArgs) => insertPet(db, pet, now),
      ({ pet, now }) => [pet.name, pet.categoryId, pet.status, now],
      { pet: { name: 'name', categoryId: 1n, status: 'sold' }, now: 2 },
    );
    this.completeStatement = precompile<CompleteArgs, unknown>(
      ({ scope, response }: CompleteArgs) => completeIdempotency(db, scope, response),
      ({ scope, response }) => [response.statusCode, response.body, scope.accountId, scope.key],
      { scope: { accountId: 3, key: 'key' }, response: { statusCode: 201, body: 'body' } },
    );
  }

  create(pet: NewPetRecord, now: number, idempotency?: PetIdempotency): Promise<PetRecord> {
    return new Promise((resolve, reject) => {
      this.pending.push({ pet, now, idempotency, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => void this.flush());
    });
  }

  async drain(): Promise<void> {
    await this.flushing;
    await this.flush();
  }

  /**
   * Holds Kysely's connection (its mutex), so the batch never lands inside a transaction another
   * caller has open, then writes the batch without yielding.
   */
  private flush(): Promise<void> {
    this.flushing = this.db
      .connection()
      .execute(async () => this.commitPending())
      .catch((error: unknown) => this.rejectPending(error));
    return this.flushing;
  }

  private commitPending(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const created: PetRecord[] = [];
    try {
      this.database.exec('BEGIN IMMEDIATE');
      for (const entry of batch) created.push(this.insert(entry));
      this.database.exec('COMMIT');
    } catch (error) {
      if (this.database.inTransaction) this.database.exec('ROLLBACK');
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => entry.resolve(created[index] as PetRecord));
  }

  private insert(entry: PendingCreate): PetRecord {
    const [row] = this.database.rowsNow(this.insertStatement(entry));
    if (!row) throw new Error('INSERT … RETURNING returned no row');
    const pet: PetRecord = { id: Number(row.id), ...entry.pet };
    if (entry.idempotency) {
      const response = entry.idempotency.respond(pet);
      this.database.rowsNow(this.completeStatement({ scope: entry.idempotency, response }));
    }
    return pet;
  }

  private rejectPending(error: unknown): void {
    const batch = this.pending;
    this.pending = [];
    for (const entry of batch) entry.reject(error);
  }
}
