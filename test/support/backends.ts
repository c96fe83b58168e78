import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Client } from 'pg';
import { pgBouncer, withDatabase } from './pgbouncer.ts';

/**
 * The storage backends every storage-dependent suite runs against, each with a fresh, isolated
 * database:
 *
 *   for (const backend of await backends()) {
 *     describe(`… (${backend.name})`, { skip: backend.skip }, () => { … backend.databaseUrl … });
 *   }
 *
 * SQLite gets a file in a temporary directory. PostgreSQL gets a new schema
 * `petstore_test_<random>` in the database of PETSTORE_TEST_POSTGRES_URL (default
 * postgres://postgres@127.0.0.1:5432/test), selected with the standard libpq `options` URL
 * parameter (`?options=-c%20search_path%3D…`), exactly as an operator would select a schema for
 * the service. `cleanup()` drops what was created.
 *
 * `pgBouncerBackend()` is PostgreSQL through PgBouncer in transaction mode (test/support/pgbouncer.ts),
 * which refuses the `options` parameter: each URL names a fresh database `petstore_test_<random>`
 * instead, created on the server directly and dropped by `cleanup()`.
 *
 * When PostgreSQL (or PgBouncer) is unavailable its suites are skipped with the reason, unless
 * CI=true: then the backend's function rejects, which fails the test file instead of silently skipping.
 */
export interface Backend {
  /** The store it opens (`store.backend`). */
  readonly name: 'sqlite' | 'postgres';
  /** How suites name it: the store, and the pooler in between if any. */
  readonly label: string;
  /** A fresh, empty, isolated DATABASE_URL ('' when skipped). */
  readonly databaseUrl: string;
  /** Why the backend cannot run here; pass it as node:test's `skip` option. */
  readonly skip?: string;
  /** Another fresh, empty, isolated DATABASE_URL, also removed by cleanup(). */
  freshDatabaseUrl(): Promise<string>;
  /** Runs raw SQL against a database of this backend (to set up odd states in tests). */
  execute(databaseUrl: string, sql: string): Promise<void>;
  /** Removes every database this backend created. Safe to call more than once. */
  cleanup(): Promise<void>;
}

export const POSTGRES_TEST_URL = process.env.PETSTORE_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';

export async function backends(): Promise<Backend[]> {
  return [sqliteBackend(), await postgresBackend()];
}

export function sqliteBackend(): Backend {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-store-'));
  let counter = 0;
  const fresh = (): string => {
    counter += 1;
    return `sqlite:${join(directory, `petstore-${counter}.db`)}`;
  };
  return {
    name: 'sqlite',
    label: 'sqlite',
    databaseUrl: fresh(),
    freshDatabaseUrl: async () => fresh(),
    async execute(databaseUrl, sql) {
      const db = new DatabaseSync(databaseUrl.slice('sqlite:'.length));
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    async cleanup() {
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A URL whose connections use `schema` first, through the libpq `options` parameter. */
export function withSearchPath(baseUrl: string, schema: string): string {
  const separator = baseUrl.includes('?') ? '&' : '?';
  return `${baseUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function postgresBackend(): Promise<Backend> {
  const base = POSTGRES_TEST_URL;
  const shown = base.replace(/\/\/[^@/]*@/, '//…@');
  try {
    await withClient(base, (client) => client.query('SELECT 1'));
  } catch (error) {
    const reason = error instanceof Error ? error.message || error.name : String(error);
    if (process.env.CI === 'true') {
      throw new Error(
        `PostgreSQL at ${shown} is unreachable (${reason}); ` +
          'CI=true, so the PostgreSQL suites fail instead of being skipped',
        { cause: error },
      );
    }
    const skip =
      `PostgreSQL at ${shown} is unreachable (${reason}); ` +
      'start it or set PETSTORE_TEST_POSTGRES_URL (with CI=true this fails instead)';
    return skipped('postgres', skip);
  }
  const schemas: string[] = [];
  const fresh = async (): Promise<string> => {
    const schema = `petstore_test_${randomBytes(6).toString('hex')}`;
    await withClient(base, (client) => client.query(`CREATE SCHEMA ${schema}`));
    schemas.push(schema);
    return withSearchPath(base, schema);
  };
  return {
    name: 'postgres',
    label: 'postgres',
    databaseUrl: await fresh(),
    freshDatabaseUrl: fresh,
    execute: executeOn,
    async cleanup() {
      const dropping = schemas.splice(0);
      if (dropping.length === 0) return;
      await withClient(base, (client) => client.query(`DROP SCHEMA IF EXISTS ${dropping.join(', ')} CASCADE`));
    },
  };
}

async function executeOn(databaseUrl: string, sql: string): Promise<void> {
  await withClient(databaseUrl, (client) => client.query(sql));
}

function skipped(label: string, skip: string): Backend {
  return {
    name: 'postgres',
    label,
    databaseUrl: '',
    skip,
    freshDatabaseUrl: () => Promise.reject(new Error(skip)),
    execute: () => Promise.reject(new Error(skip)),
    cleanup: async () => undefined,
  };
}

/**
 * PostgreSQL through PgBouncer in transaction mode: each URL is PgBouncer's, for a fresh database
 * of its own. Start a server on it with `startServerProcess({ DATABASE_URL: backend.databaseUrl })`.
 */
export async function pgBouncerBackend(): Promise<Backend> {
  const label = 'postgres through PgBouncer';
  const bouncer = await pgBouncer();
  if (bouncer.skip !== undefined) return skipped(label, bouncer.skip);
  const databases: string[] = [];
  const create = async (): Promise<string> => {
    const database = `petstore_test_${randomBytes(6).toString('hex')}`;
    databases.push(database);
    // template0 takes no connections, so concurrent creations never find it in use.
    await withClient(POSTGRES_TEST_URL, (client) => client.query(`CREATE DATABASE ${database} TEMPLATE template0`));
    return withDatabase(bouncer.url, database);
  };
  // A creation takes a few hundred milliseconds: a suite that asks for one fresh database is likely
  // to ask for more, so the next one is made while its tests run.
  let spare: Promise<string> | undefined;
  const fresh = (): Promise<string> => {
    const next = spare ?? create();
    spare = create();
    spare.catch(() => undefined);
    return next;
  };
  let databaseUrl: string;
  try {
    databaseUrl = await create();
  } catch (error) {
    await bouncer.stop();
    throw error;
  }
  return {
    name: 'postgres',
    label,
    databaseUrl,
    freshDatabaseUrl: fresh,
    execute: executeOn,
    async cleanup() {
      await spare?.catch(() => undefined);
      spare = undefined;
      const dropping = databases.splice(0);
      try {
        // PgBouncer keeps server connections to them open: FORCE ends those.
        await Promise.all(
          dropping.map((database) =>
            withClient(POSTGRES_TEST_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)),
          ),
        );
      } finally {
        await bouncer.stop();
      }
    },
  };
}
