import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, SqliteDatabase, SqliteStatement } from 'kysely';
import { StorageUnavailableError } from '../errors.ts';

/**
 * How this process uses a SQLite file without ever waiting for a lock inside a synchronous call.
 *
 * node:sqlite is synchronous: a busy timeout sleeps in the calling thread, so while another process
 * (a backup, a migration, a CLI command) held the write lock, every request of this process stalled
 * with it. Here connections have no busy timeout: a statement that finds the file locked fails at
 * once with SQLITE_BUSY, and is tried again on a timer, so the event loop keeps serving, until the
 * call's deadline; then it fails with StorageUnavailableError (503). Reads go to a connection of
 * their own, which in WAL mode no writer blocks; writes go to the writer connection, one
 * transaction at a time in this process.
 */

/** SQLITE_BUSY and SQLITE_LOCKED, with any extended code. */
export function isBusy(error: unknown): boolean {
  if (!(error instanceof Error) || !('errcode' in error) || typeof error.errcode !== 'number') return false;
  const primary = error.errcode & 0xff;
  return primary === 5 || primary === 6;
}

export function lockedError(cause?: unknown): StorageUnavailableError {
  return new StorageUnavailableError(
    'storage is unavailable: the SQLite database stayed locked by another writer; retry later',
    cause === undefined ? undefined : { cause },
  );
}

/** Waits between tries while the file is locked: doubling from the first to the longest. */
export const FIRST_RETRY_MS = 2;
export const LONGEST_RETRY_MS = 25;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` until it does not find the database busy, sleeping on timers in between, until `deadline`. */
export async function retryWhileBusy<T>(attempt: () => T, deadline: number): Promise<T> {
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, LONGEST_RETRY_MS)) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const left = deadline - performance.now();
      if (left <= 0) throw lockedError(error);
      await sleep(Math.min(delay, left));
    }
  }
}

/** The writer connection, one holder at a time in this process; waiting for it is bounded. */
export class WriterLock {
  private locked = false;
  private readonly waiters: Array<() => void> = [];

  /** The function that releases it, or undefined at once when another holds it: for background writes. */
  tryAcquire(): (() => void) | undefined {
    if (this.locked) return undefined;
    this.locked = true;
    return this.releaser();
  }

  /** Resolves with the function that releases it; rejects with StorageUnavailableError at `deadline`. */
  acquire(deadline = Number.POSITIVE_INFINITY): Promise<() => void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = (): void => {
        clearTimeout(timer);
        resolve(this.releaser());
      };
      const timer = Number.isFinite(deadline)
        ? setTimeout(
            () => {
              this.waiters.splice(this.waiters.indexOf(waiter), 1);
              reject(lockedError());
            },
            Math.max(0, deadline - performance.now()),
          )
        : undefined;
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.locked = false;
    };
  }
}

/** Statements kept prepared; the query set is fixed (LIMIT values included), this only bounds it. */
const MAX_CACHED_STATEMENTS = 1000;

/**
 * Adapts `DatabaseSync` to the better-sqlite3-like object Kysely's SQLite pieces expect. Every
 * statement reads integers as bigints, so an int64 `category_id` beyond 2^53 comes back digit for
 * digit; the row mappers turn ids, counts and times into numbers.
 */
export class NodeSqliteDatabase implements SqliteDatabase {
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

  /** Runs a statement at once, for work that must not yield (the group commit): its SQL text and values. */
  rowsNow<Row>(query: Pick<CompiledQuery, 'sql' | 'parameters'>): Row[] {
    return this.prepare(query.sql).all(query.parameters) as Row[];
  }

  run(query: CompiledQuery): QueryResult<unknown> {
    const statement = this.prepare(query.sql);
    if (statement.reader) return { rows: statement.all(query.parameters) };
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    return { insertId: BigInt(lastInsertRowid), numAffectedRows: BigInt(changes), rows: [] };
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

export interface SqliteConnections {
  readonly writer: NodeSqliteDatabase;
  /** The writer itself for `:memory:`, where a second connection would be another database. */
  readonly reader: NodeSqliteDatabase;
  readonly writerLock: WriterLock;
  /** Longest a call waits for a lock before StorageUnavailableError. */
  readonly timeoutMs: number;
}

const isRead = (text: string): boolean => /^\s*select\b/i.test(text);

/**
 * A read compiled once, run on the reader connection through its own prepared statement: each call
 * binds its parameters and steps it, with no Kysely executor and no session, as SqliteSession runs
 * a read (retried on a timer while the file is busy). The statement is prepared on the first call,
 * since the table may not exist before the migrations, and kept from then on.
 */
export function keptRead<Row>(
  connections: SqliteConnections,
  query: CompiledQuery<Row>,
): (parameters: readonly unknown[]) => Promise<Row[]> {
  let statement: SqliteStatement | undefined;
  const read = (parameters: readonly unknown[]): Row[] => {
    statement ??= connections.reader.prepare(query.sql);
    return statement.all(parameters) as Row[];
  };
  return (parameters) => retryWhileBusy(() => read(parameters), performance.now() + connections.timeoutMs);
}

/**
 * Kysely's driver over those connections. Kysely's own SQLite driver hands out one connection
 * behind a mutex, so a write waiting for the file's lock would hold up every read; here each
 * acquisition is a light session, and only writes and transactions take the writer. (Kysely's
 * runtime adds such a mutex of its own for an adapter without multiple connections, so the
 * dialect's adapter says it has them.)
 */
export class NodeSqliteDriver implements Driver {
  private readonly connections: SqliteConnections;

  constructor(connections: SqliteConnections) {
    this.connections = connections;
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new SqliteSession(this.connections));
  }

  beginTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as SqliteSession).begin();
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as SqliteSession).commit();
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as SqliteSession).rollback();
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as SqliteSession).release();
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    this.connections.reader.close();
    this.connections.writer.close();
    return Promise.resolve();
  }
}

class SqliteSession implements DatabaseConnection {
  private readonly connections: SqliteConnections;
  /** Set while this session's transaction holds the writer. */
  private releaseWriter: (() => void) | undefined;

  constructor(connections: SqliteConnections) {
    this.connections = connections;
  }

  private deadline(): number {
    return performance.now() + this.connections.timeoutMs;
  }

  /** BEGIN IMMEDIATE takes the file's write lock first, so a transaction never fails half-way for it. */
  async begin(): Promise<void> {
    const deadline = this.deadline();
    const release = await this.connections.writerLock.acquire(deadline);
    try {
      await retryWhileBusy(() => this.connections.writer.exec('BEGIN IMMEDIATE'), deadline);
    } catch (error) {
      release();
      throw error;
    }
    this.releaseWriter = release;
  }

  /** In WAL mode a commit needs no lock it does not hold; a failure leaves the rollback to Kysely. */
  async commit(): Promise<void> {
    this.connections.writer.exec('COMMIT');
    this.release();
    return Promise.resolve();
  }

  async rollback(): Promise<void> {
    try {
      if (this.connections.writer.inTransaction) this.connections.writer.exec('ROLLBACK');
    } finally {
      this.release();
    }
    return Promise.resolve();
  }

  release(): void {
    const release = this.releaseWriter;
    this.releaseWriter = undefined;
    release?.();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, reader } = this.connections;
    if (this.releaseWriter) return writer.run(query) as QueryResult<R>;
    const deadline = this.deadline();
    if (isRead(query.sql)) return (await retryWhileBusy(() => reader.run(query), deadline)) as QueryResult<R>;
    const release = await this.connections.writerLock.acquire(deadline);
    try {
      return (await retryWhileBusy(() => writer.run(query), deadline)) as QueryResult<R>;
    } finally {
      release();
    }
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const result = await this.executeQuery<R>(query);
    for (const row of result.rows) yield { rows: [row] };
  }
}

/**
 * A background write (src/domain/background-write.ts) on SQLite: the statements in one
 * transaction, only if this process's writer is free and one BEGIN IMMEDIATE finds the file's write
 * lock free. A busy writer returns false; a write lock held by another process (a backup, a CLI
 * command) is StorageUnavailableError, since storage refuses every write then, as it would a
 * request's. Either way nothing is written and nothing waited for, so it never queues behind or in
 * front of a request. The statements run without yielding: the writer is held for them and the
 * commit only.
 */
export function writeIfIdle(connections: SqliteConnections, statements: readonly CompiledQuery[]): boolean {
  const release = connections.writerLock.tryAcquire();
  if (!release) return false;
  try {
    try {
      connections.writer.exec('BEGIN IMMEDIATE');
    } catch (error) {
      if (isBusy(error)) throw heldElsewhereError(error);
      throw error;
    }
    commitStatements(connections.writer, statements);
    return true;
  } finally {
    release();
  }
}

function heldElsewhereError(cause: unknown): StorageUnavailableError {
  return new StorageUnavailableError(
    'storage is unavailable: another process holds the SQLite write lock; retry later',
    { cause },
  );
}

/**
 * The same write waiting as a request's does, up to the storage timeout, for the last flush at
 * shutdown, when no request is left to hold up.
 */
export async function writeWaiting(
  connections: SqliteConnections,
  statements: readonly CompiledQuery[],
): Promise<void> {
  const deadline = performance.now() + connections.timeoutMs;
  const release = await connections.writerLock.acquire(deadline);
  try {
    await retryWhileBusy(() => connections.writer.exec('BEGIN IMMEDIATE'), deadline);
    commitStatements(connections.writer, statements);
  } finally {
    release();
  }
}

/** Runs the statements in the transaction just begun and commits it, without yielding; rolls back on failure. */
function commitStatements(writer: NodeSqliteDatabase, statements: readonly CompiledQuery[]): void {
  try {
    for (const statement of statements) writer.run(statement);
    writer.exec('COMMIT');
  } catch (error) {
    if (writer.inTransaction) writer.exec('ROLLBACK');
    throw error;
  }
}
