import { createConnection, type Socket } from 'node:net';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  PostgresDriver,
  sql,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type Kysely as KyselyInstance,
  type PostgresCursor,
  type PostgresDialectConfig,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type QueryExecutorProvider,
  type TransactionSettings,
} from 'kysely';
import { DatabaseError, Pool, type PoolClient, type PoolConfig } from 'pg';
import { IdempotencyInFlightError, StorageUnavailableError } from '../errors.ts';
import type { DatabaseSchema, IntegerValue } from './database-schema.ts';
import { applyMigrations, type MigrationDialect } from './migrations.ts';
import {
  completedOutcome,
  findIdempotency,
  insertPet,
  SqlStore,
  storeIdempotency,
  type Database,
  type PetCommitter,
} from './sql-store.ts';
import {
  NEW_PET_FIELD_LIST,
  type NewPetRecord,
  type PetFieldKinds,
  type PetRecord,
  type SuppliedPetFieldKind,
} from '../domain/pet.ts';
import type { IdempotentCreate, IdempotentOutcome } from '../domain/pet-store.ts';
import type { Store } from '../domain/store.ts';

export interface PostgresStoreOptions {
  /** Connections this instance may open. */
  readonly poolSize: number;
  /** Longest a storage call (pool wait, connect and statements together) may take before StorageUnavailableError. */
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
 *   `postgres://u@h/db?options=-c%20search_path%3Dpetstore`, or with the role's own search_path;
 *   the URL's own settings win over the defaults set here.
 * - Works the same through PgBouncer in transaction mode: no startup parameter but
 *   application_name, no session state (timeouts are set per transaction, locks are
 *   transaction-scoped), no named prepared statements (pg names one only when given a name).
 * - bigint columns arrive as strings: ids and times become numbers (they stay below 2^53),
 *   category_id becomes an exact BigInt; a BigInt parameter is sent as its decimal string.
 * - Connection failures, refusals and timeouts become StorageUnavailableError (HTTP 503);
 *   everything else, e.g. a violated constraint, propagates as it is.
 */
export function openPostgresStore(url: string, options: PostgresStoreOptions): Store {
  const pool = new TranslatingPool(
    {
      connectionString: url,
      max: options.poolSize,
      // Waiting for a free pooled connection and opening a new one are both bounded by this.
      connectionTimeoutMillis: options.timeoutMs,
      // The client gives up on a statement a little after the call's deadline. Inside a transaction
      // the server's own statement_timeout has ended it by then; a single statement is cancelled on
      // the server at this point (CheckedOutClient), unless an earlier cancel is still unanswered
      // (CancelRequests), and its connection dropped.
      query_timeout: options.timeoutMs + Math.min(1000, options.timeoutMs),
      application_name: 'petstore',
      keepAlive: true,
      idleTimeoutMillis: 30_000,
    },
    options.onIdleError,
  );
  const db = new Kysely<DatabaseSchema>({
    dialect: new PoolerSafeDialect({ pool }, timedBegin(options.timeoutMs)),
  });
  return new SqlStore({
    backend: 'postgres',
    db,
    pets: new PostgresGroupCommit(db, options.timeoutMs),
    isUniqueViolation: (error) => error instanceof Error && 'code' in error && error.code === '23505',
    locksRowsForChange: true,
    keepRead: (query) => (parameters) => pool.read(query, parameters),
    callTimeoutMs: options.timeoutMs,
    writeInBackground: async (statements, mode) => {
      if (mode === 'if-idle' && !pool.hasSpareConnection()) return false;
      await db.transaction().execute(async (trx) => {
        for (const statement of statements) await trx.executeQuery(statement);
      });
      return true;
    },
    migrate: (through) => migrate(url, options, through),
    // Kysely ends the pool only if a query of its own ever ran; the kept reads use the pool directly,
    // and a pool left open would hold the process up to idleTimeoutMillis after close.
    destroy: () => db.destroy().finally(() => pool.end()),
  });
}

/**
 * What opens every transaction of the store: one message, so the timeouts cost no round trip.
 * They are SET LOCAL, not startup parameters or session settings, which a pooler in transaction
 * mode refuses or leaves on a server connection other clients then use. Single statements have
 * no server-side timeout of their own: the call's deadline answers the caller, and the client
 * cancels the statement on the server when it gives up on it (CheckedOutClient).
 */
function timedBegin(timeoutMs: number): string {
  const statementMs = Math.max(1, Math.trunc(timeoutMs));
  // A connection left idle inside a transaction (a stuck caller) must not hold locks forever.
  const idleMs = Math.max(10 * statementMs, 60_000);
  const timeouts = `statement_timeout = ${statementMs}; set local idle_in_transaction_session_timeout = ${idleMs}`;
  return `begin; set local ${timeouts}`;
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

/** The error the server (PostgreSQL, or a pooler in front of it) sent, if it sent one. */
function serverErrorOf(error: unknown, depth = 0): DatabaseError | undefined {
  if (error instanceof DatabaseError) return error;
  if (!(error instanceof Error) || depth > 4) return undefined;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const found = serverErrorOf(inner, depth + 1);
      if (found) return found;
    }
  }
  return serverErrorOf(error.cause, depth + 1);
}

/** The driver's own timeouts; only the driver's messages are matched, never a server's text. */
const DRIVER_TIMEOUTS = [
  /timeout exceeded when trying to connect/i,
  /connection timeout/i,
  /query read timeout/i,
  /^timeout expired$/i,
];

/** Where the error arose: a server's answer to a connection attempt is a refusal. */
type Phase = 'connect' | 'statement';

function reasonOf(error: unknown, phase: Phase): string {
  const server = serverErrorOf(error);
  if (server?.code === '57014' || server?.code === '55P03') return 'PostgreSQL did not answer in time; retry later';
  // The server's own words, which name what to fix (an unsupported startup parameter, a database
  // that does not exist, a failed password, a full pool), go to the error's detail.
  if (server && phase === 'connect') return 'the database server refused the connection';
  if (server) return 'the connection to PostgreSQL failed; retry later';
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  const message = error instanceof Error ? error.message : '';
  if (code === 'ETIMEDOUT' || DRIVER_TIMEOUTS.some((pattern) => pattern.test(message))) {
    return 'PostgreSQL did not answer in time; retry later';
  }
  if (code === 'ECONNREFUSED') return 'PostgreSQL refused the connection; retry later';
  return 'the connection to PostgreSQL failed; retry later';
}

/**
 * Storage outages become StorageUnavailableError; any other error is returned unchanged. Whatever
 * the server answers a connection attempt with is a refusal: nothing can be done without it.
 */
function translate(error: unknown, phase: Phase = 'statement'): unknown {
  if (error instanceof StorageUnavailableError) return error;
  const refused = phase === 'connect' && serverErrorOf(error) !== undefined;
  if (!refused && !isUnavailable(error)) return error;
  const detail = serverErrorOf(error)?.message;
  return new StorageUnavailableError(`storage is unavailable: ${reasonOf(error, phase)}`, {
    cause: error,
    ...(detail === undefined ? {} : { detail }),
  });
}

// ---------------------------------------------------------------------------------------------
// Connections

/**
 * The pg.Pool Kysely's PostgresDialect draws from, translating errors where they arise, so every
 * query, Kysely's own included, rejects with StorageUnavailableError during an outage.
 */
class TranslatingPool implements PostgresPool {
  private readonly pool: Pool;
  private readonly cancels: CancelRequests;
  private ended = false;

  constructor(config: PoolConfig, onIdleError: ((error: Error) => void) | undefined) {
    this.pool = new Pool(config);
    this.cancels = new CancelRequests(Math.min(1000, config.connectionTimeoutMillis ?? 1000));
    // An idle connection that dies (server restart, network cut, pg_terminate_backend) is emitted
    // here after the pool removed it. Without a listener the process would crash; with one the
    // pool simply opens a new connection for the next query, so it recovers on its own.
    this.pool.on('error', (error) => onIdleError?.(error));
  }

  get options(): object {
    return this.pool.options;
  }

  async connect(): Promise<PostgresPoolClient> {
    try {
      return new CheckedOutClient(await this.pool.connect(), this.cancels);
    } catch (error) {
      throw translate(error, 'connect');
    }
  }

  /**
   * One statement compiled once, sent with these parameters on a pooled connection, as Kysely's
   * executor would send it but without it: the same CheckedOutClient translates errors and cancels
   * a statement given up on. Unnamed, as every statement of this store, so a pooler in transaction
   * mode can take it: the server parses it again (microseconds), the round trip is the cost.
   */
  async read<Row>(query: CompiledQuery<Row>, parameters: readonly unknown[]): Promise<Row[]> {
    const client = await this.connect();
    try {
      return (await client.query<Row>(query.sql, parameters)).rows;
    } finally {
      client.release();
    }
  }

  /** A connection is to be had without queueing behind a request: one is idle or may be opened, and none is awaited. */
  hasSpareConnection(): boolean {
    const { waitingCount, idleCount, totalCount, options } = this.pool;
    return waitingCount === 0 && (idleCount > 0 || totalCount < (options.max ?? 10));
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.pool.end();
  }
}

/** pg's message when `query_timeout` passed before the server answered. */
const READ_TIMEOUT = 'Query read timeout';

/**
 * A checked-out connection. It has no pool listener while checked out, so a socket error between
 * two statements is caught here instead of becoming an unhandled 'error' event; a connection whose
 * state is unknown after an outage is destroyed on release instead of going back to the pool (the
 * server rolls back whatever it had open).
 */
class CheckedOutClient implements PostgresPoolClient {
  private readonly client: PoolClient;
  private readonly cancels: CancelRequests;
  private broken: Error | undefined;
  /** The client gave up waiting for a statement the server may still be running. */
  private abandoned = false;
  private readonly onError = (error: Error): void => {
    this.broken ??= error;
  };

  constructor(client: PoolClient, cancels: CancelRequests) {
    this.client = client;
    this.cancels = cancels;
    client.on('error', this.onError);
  }

  get processID(): number | undefined {
    return (this.client as PoolClient & { processID?: number }).processID;
  }

  query<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    textOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof textOrCursor !== 'string') throw new Error('cursors are not used by this store');
    return this.run<R>(textOrCursor, parameters);
  }

  /** Never with a statement name: a pooler in transaction mode cannot keep named statements. */
  private async run<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    try {
      return (await this.client.query(text, [...parameters])) as unknown as PostgresQueryResult<R>;
    } catch (error) {
      if (error instanceof Error && error.message === READ_TIMEOUT) this.abandoned = true;
      const translated = translate(error);
      if (translated instanceof StorageUnavailableError) this.broken ??= translated;
      throw translated;
    }
  }

  release(destroy?: boolean): void {
    const done = (): void => {
      this.client.removeListener('error', this.onError);
      // Releasing with an error destroys the connection instead of returning it to the pool.
      this.client.release(this.broken ?? destroy);
    };
    if (!this.abandoned) return done();
    // A statement waiting for a lock would otherwise run on after the connection is dropped. The
    // cancel goes first: a pooler forwards it only while the connection that sent the statement is open.
    void this.cancels.cancel(this.client).then(done);
  }
}

/** PostgreSQL's CancelRequest code (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80877102;

/** A pooler or server host that vanishes while a cancel waits is noticed within minutes, not the OS's two hours. */
const CANCEL_KEEPALIVE_MS = 60_000;

/**
 * The cancel requests of one pool, each on a connection of its own as the protocol requires.
 *
 * The server (PostgreSQL, or a pooler, which forwards the request) closes that connection once it
 * has handled the request, and this side never closes it first once the request is written:
 * PgBouncer 1.18.0 exits (`disconnect_client(): bad client state`) when the sender of a cancel it
 * is still forwarding hangs up before PostgreSQL takes it, which an unreachable PostgreSQL makes
 * happen. A caller waits at most `waitMs`; the connection then stays open, unreferenced, until
 * the server closes it, and close() leaves it open too.
 *
 * A cancel still unanswered after `waitMs` means PostgreSQL is not reachable: no further cancel is
 * sent until it is answered, so an outage piles up neither open connections here nor cancels in
 * the pooler, each of which opens a server connection of its own.
 */
class CancelRequests {
  private readonly waitMs: number;
  /** Written requests the server has not closed yet, with when each was written (performance.now()). */
  private readonly unanswered = new Map<Socket, number>();

  constructor(waitMs: number) {
    this.waitMs = waitMs;
  }

  /** Cancels what `client` is running; settles once the server closed the request, or after `waitMs`; never rejects. */
  cancel(client: PoolClient): Promise<void> {
    const request = cancelRequestOf(client);
    if (!request || this.serverUnreachable()) return Promise.resolve();
    return new Promise((resolve) => {
      const socket = client.host.startsWith('/')
        ? createConnection(`${client.host}/.s.PGSQL.${client.port}`)
        : createConnection(client.port, client.host);
      const finished = (): void => {
        clearTimeout(timer);
        this.unanswered.delete(socket);
        socket.destroy();
        resolve();
      };
      const timer = setTimeout(() => {
        // Nothing was sent yet: giving up on the connection is harmless.
        if (!this.unanswered.has(socket)) return finished();
        socket.unref();
        resolve();
      }, this.waitMs);
      socket.once('connect', () => {
        socket.setKeepAlive(true, CANCEL_KEEPALIVE_MS);
        // Written, not ended: a pooler drops a cancel whose sender hangs up before it is forwarded.
        socket.write(request);
        this.unanswered.set(socket, performance.now());
      });
      socket.once('error', finished);
      socket.once('close', finished);
    });
  }

  private serverUnreachable(): boolean {
    const now = performance.now();
    for (const writtenAt of this.unanswered.values()) if (now - writtenAt >= this.waitMs) return true;
    return false;
  }
}

/** The CancelRequest message for what `client` runs, if the server gave it a key. */
function cancelRequestOf(client: PoolClient): Buffer | undefined {
  const { processID, secretKey } = client as PoolClient & { processID?: unknown; secretKey?: unknown };
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return undefined;
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey, 12);
  return request;
}

// ---------------------------------------------------------------------------------------------
// Locks and migrations

/**
 * Advisory lock keys, scoped to the schema so that deployments sharing a database in different
 * schemas do not wait on each other. The migrations key is the one the first release locked, so
 * an old and a new instance starting together exclude each other too.
 */
const lockKey = (purpose: string) =>
  sql<string>`hashtextextended(${`petstore:${purpose}:`} || coalesce(current_schema(), ''), 0)`;

/**
 * Transaction-scoped, so it works through a pooler in transaction mode, and released by the
 * commit or rollback that ends the migration. It excludes an older release's session lock on the
 * same key as well: both kinds of advisory lock share one lock space.
 */
async function lockMigrations(db: QueryExecutorProvider): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${lockKey('migrations')})`.execute(db);
}

/** Kysely's PostgreSQL migration lock is one advisory lock for the whole database; this one is per schema. */
class SchemaScopedAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: KyselyInstance<unknown>): Promise<void> {
    // Taken already at the start of the migration transaction (migrate()); taking it again is free.
    await lockMigrations(db);
  }

  override async releaseMigrationLock(): Promise<void> {
    // Released with the transaction. A statement here would fail in a transaction that a failed
    // migration aborted, and hide that migration's error.
  }
}

/** Opens each transaction with `begin`: plain, or with the SET LOCAL timeouts of timedBegin(). */
class BeginningDriver extends PostgresDriver {
  private readonly begin: string;

  constructor(config: PostgresDialectConfig, begin: string) {
    super(config);
    this.begin = begin;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel !== undefined || settings.accessMode !== undefined) {
      throw new Error('transaction settings are not used by this store');
    }
    await connection.executeQuery(CompiledQuery.raw(this.begin));
  }
}

class PoolerSafeDialect extends PostgresDialect {
  private readonly config: PostgresDialectConfig;
  private readonly begin: string;

  constructor(config: PostgresDialectConfig, begin: string) {
    super(config);
    this.config = config;
    this.begin = begin;
  }

  override createDriver(): Driver {
    return new BeginningDriver(this.config, this.begin);
  }

  override createAdapter(): DialectAdapter {
    return new SchemaScopedAdapter();
  }
}

const postgresMigrationDialect: MigrationDialect = {
  backend: 'postgres',
  integerType: 'bigint',
  generatedId: (column) => column.primaryKey().generatedAlwaysAsIdentity(),
  async tableExists(db, table) {
    const { rows } = await sql<{ found: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS found`.execute(db);
    return rows[0]?.found === true;
  },
};

/**
 * Migrations run on their own connection without the statement timeout, since a migration (or the
 * wait for another instance's) may legitimately be slow. Everything, Kysely's bookkeeping tables
 * included, happens in one transaction under the lock: instances starting together wait on it,
 * then find nothing to do; a failure leaves nothing behind.
 */
async function migrate(url: string, options: PostgresStoreOptions, through?: string): Promise<number> {
  const pool = new TranslatingPool(
    {
      connectionString: url,
      max: 1,
      connectionTimeoutMillis: options.timeoutMs,
      application_name: 'petstore-migrate',
    },
    undefined,
  );
  const db = new Kysely<DatabaseSchema>({ dialect: new PoolerSafeDialect({ pool }, 'begin') });
  try {
    return await db.transaction().execute(async (trx) => {
      await lockMigrations(trx);
      const { rows } = await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(trx);
      const schema = rows[0]?.schema;
      if (!schema) throw new Error('no schema to migrate: search_path names no existing schema');
      return applyMigrations({ db: trx, dialect: postgresMigrationDialect, bookkeepingSchema: schema, through });
    });
  } catch (error) {
    throw translate(error);
  } finally {
    await db.destroy().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Group commit

/** 55P03: the wait for a lock outlasted lock_timeout. */
const isLockTimeout = (error: unknown): boolean =>
  error instanceof Error &&
  (('code' in error && error.code === '55P03') || (error.cause !== undefined && isLockTimeout(error.cause)));

/** Hash collisions between keys only make two requests wait for each other. */
async function lockIdempotencyKey(trx: Database, scope: IdempotentCreate, waitMs: number): Promise<void> {
  await sql`SELECT set_config('lock_timeout', ${`${waitMs}ms`}, true)`.execute(trx);
  try {
    await sql`SELECT pg_advisory_xact_lock(${lockKey(`idempotency:${scope.accountId}:${scope.key}`)})`.execute(trx);
  } catch (error) {
    if (!isLockTimeout(error)) throw error;
    throw new IdempotencyInFlightError('a request with this Idempotency-Key is still being processed; retry shortly');
  }
  await sql`SELECT set_config('lock_timeout', '0', true)`.execute(trx);
}

interface QueuedCreate {
  readonly pet: NewPetRecord;
  readonly now: number;
  /** performance.now() after which the caller has had its 503: the creation is dropped, not sent. */
  readonly deadline: number;
  resolve(pet: PetRecord): void;
  reject(error: unknown): void;
}

/** How each kind of supplied field goes into the batch INSERT: as an element of an array of `type`. */
const UNNEST_ARRAYS: {
  readonly [K in SuppliedPetFieldKind]: { readonly type: string; element(value: PetFieldKinds[K]): string | null };
} = {
  text: { type: 'text', element: (value) => value },
  // Sent as decimal text, cast to bigint by the server: exact beyond 2^53.
  int64: { type: 'bigint', element: (value) => value.toString() },
  'nullable-enum': { type: 'text', element: (value) => value },
};

const BATCH_FIELDS = NEW_PET_FIELD_LIST.map((field) => ({
  name: field.name,
  element: UNNEST_ARRAYS[field.kind].element as (value: PetFieldKinds[SuppliedPetFieldKind]) => string | null,
  arrayType: sql.raw(`${UNNEST_ARRAYS[field.kind].type}[]`),
}));

/** The columns a batch fills, in the order of its arrays; `input` is the unnested batch. */
const BATCH_COLUMNS = sql.join([...NEW_PET_FIELD_LIST.map((field) => sql.id(field.column)), sql.id('created_at')]);
const BATCH_INPUT = sql.join([
  ...NEW_PET_FIELD_LIST.map((field) => sql.ref(`input.${field.column}`)),
  sql.ref('input.created_at'),
]);

/** Most creations one group-commit statement carries. */
const MAX_BATCH = 500;

/**
 * Creations take a transaction-scoped advisory lock before drawing their id, so ids become visible
 * in ascending order, as with SQLite's single writer: a reader paging with `afterId` never sees id
 * N+1 committed while N is still to come. Since creations are serialised by the lock anyway, the
 * ones that arrive while a batch is being written go out together in the next one: one `unnest`
 * INSERT and one commit for all of them, which is what lets several requests share the wait for a
 * commit. Each promise resolves after COMMIT (synchronous_commit).
 */
class PostgresGroupCommit implements PetCommitter {
  private readonly db: Database;
  private queue: QueuedCreate[] = [];
  private flushing: Promise<void> | undefined;

  private readonly timeoutMs: number;

  constructor(db: Database, timeoutMs: number) {
    this.db = db;
    this.timeoutMs = timeoutMs;
  }

  create(pet: NewPetRecord, now: number): Promise<PetRecord> {
    return new Promise((resolve, reject) => {
      this.queue.push({ pet, now, deadline: performance.now() + this.timeoutMs, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  async drain(): Promise<void> {
    await this.flushing;
  }

  /**
   * One transaction: a transaction-scoped advisory lock on (account, key), then either the completed
   * record, or the pet and its completed record inserted together under the pets lock. Nothing is
   * left behind by a request that fails or loses its connection (the server rolls back), and a
   * commit whose answer was lost is what the retry finds. A request with the same key waits for the
   * lock, then finds the record; if the first still holds it when the wait ends, the answer is 409.
   */
  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return this.db.transaction().execute(async (trx) => {
      await lockIdempotencyKey(trx, request, this.keyWaitMs());
      const completed = completedOutcome(await findIdempotency(trx, request).executeTakeFirst());
      if (completed) return completed;
      await sql`SELECT pg_advisory_xact_lock(${lockKey('pets')})`.execute(trx);
      const row = await insertPet(trx, pet, now).executeTakeFirstOrThrow();
      const created: PetRecord = { id: Number(row.id), ...pet };
      await storeIdempotency(trx, request, now, request.respond(created)).execute();
      return { state: 'created', pet: created };
    });
  }

  /** The key's lock is waited for most of the deadline, leaving the rest for the work under it. */
  private keyWaitMs(): number {
    return Math.max(1, Math.floor(this.timeoutMs * 0.75));
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) continue;
      try {
        const ids = await this.insertBatch(batch);
        batch.forEach((entry, index) => entry.resolve({ id: ids[index] as number, ...entry.pet }));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.flushing = undefined;
  }

  /**
   * Creations queued behind a batch that hung (an outage) until their caller's deadline are never
   * sent: their callers already got 503, and a pet committed after it would be a surprise.
   */
  private takeBatch(): QueuedCreate[] {
    const now = performance.now();
    const batch: QueuedCreate[] = [];
    for (const entry of this.queue.splice(0, MAX_BATCH)) {
      if (entry.deadline > now) batch.push(entry);
      else entry.reject(new StorageUnavailableError('storage is unavailable: it did not answer in time; retry later'));
    }
    return batch;
  }

  /** Ids of the inserted rows, in the order of `batch`; one statement, so its own transaction. */
  private async insertBatch(batch: readonly QueuedCreate[]): Promise<number[]> {
    // Under the lock nothing else draws ids, and rows are inserted in `ord` order, so the batch's
    // ids ascend in input order: sorting them maps each id back to its creation.
    // An array per column, each cast to its type: `$1::text[], $2::bigint[], …`, the times last.
    const arrays = BATCH_FIELDS.map(
      (field) => sql`${batch.map((entry) => field.element(entry.pet[field.name]))}::${field.arrayType}`,
    );
    const { rows } = await sql<{ id: IntegerValue }>`
      WITH serial AS (SELECT pg_advisory_xact_lock(${lockKey('pets')})),
        input AS (
          SELECT * FROM unnest(${sql.join(arrays)}, ${batch.map((entry) => entry.now)}::bigint[])
            WITH ORDINALITY AS t(${BATCH_COLUMNS}, ord)
        )
      INSERT INTO pets (${BATCH_COLUMNS})
      SELECT ${BATCH_INPUT} FROM input, serial ORDER BY input.ord
      RETURNING id`.execute(this.db);
    if (rows.length !== batch.length) throw new Error(`inserted ${rows.length} pets for ${batch.length} creations`);
    return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  }
}
