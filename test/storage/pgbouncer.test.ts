import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { StorageUnavailableError } from '../../src/errors.ts';
import { MIGRATION_NAMES } from '../../src/storage/migrations.ts';
import { openPostgresStore } from '../../src/storage/postgres-dialect.ts';
import type { Store } from '../../src/domain/store.ts';
import { pgBouncerBackend, postgresBackend, POSTGRES_TEST_URL } from '../support/backends.ts';
import { runCliProcess } from '../support/cli-runner.ts';
import { request, type Pet } from '../support/http-client.ts';
import { withDatabase } from '../support/pgbouncer.ts';
import { startServerProcess } from '../support/server-process.ts';

/**
 * The service, its CLI and its store through PgBouncer in transaction mode with PgBouncer's default
 * settings: nothing may depend on a session of its own (startup parameters, session settings,
 * session locks, named statements), and what holds directly must hold through it too: the statement
 * timeout, migrations applied once, refusals reported in the server's words.
 */

const TIMEOUT_MS = 500;

const [postgres, bouncer] = await Promise.all([postgresBackend(), pgBouncerBackend()]);

after(() => Promise.all([postgres.cleanup(), bouncer.cleanup()]));

/** The same database, reached on the server directly (session state there is what a test sets up on purpose). */
function directUrl(url: string): string {
  const direct = new URL(url);
  direct.host = new URL(POSTGRES_TEST_URL).host;
  return direct.toString();
}

async function connected(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Resolves once `check` holds; fails the test when it has not within `limitMs`. */
async function eventually(what: string, check: () => Promise<boolean>, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function refusal(url: string): Promise<StorageUnavailableError> {
  // A timeout far longer than any refusal takes: a refusal mistaken for a timeout shows in its message.
  const store = openPostgresStore(url, { poolSize: 1, timeoutMs: 10_000 });
  try {
    const error = await store.ping().then(
      () => assert.fail('the connection was accepted'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof StorageUnavailableError, `expected StorageUnavailableError, got ${String(error)}`);
    assert.doesNotMatch(error.message, /did not answer in time/);
    // The server's words are for operators: API clients get the message, which names nothing inside.
    assert.equal(error.message, 'storage is unavailable: the database server refused the connection');
    return error;
  } finally {
    await store.close();
  }
}

const uniqueName = (prefix: string): string => `${prefix}_${process.pid}_${Date.now()}`;

describe('a refused connection is reported in the server’s words', () => {
  it('PostgreSQL: a database that does not exist, a role that does not exist', { skip: postgres.skip }, async () => {
    const database = uniqueName('petstore_missing');
    const missingDatabase = await refusal(withDatabase(POSTGRES_TEST_URL, database));
    assert.equal(missingDatabase.detail, `database "${database}" does not exist`);
    const role = uniqueName('petstore_nobody');
    const url = new URL(POSTGRES_TEST_URL);
    url.username = role;
    assert.match((await refusal(url.toString())).detail ?? '', new RegExp(`role "${role}" does not exist`));
  });

  it(
    'PgBouncer: a startup parameter it does not support, a database that does not exist',
    {
      skip: bouncer.skip,
    },
    async () => {
      // statement_timeout is what an earlier release sent; options is how a schema is chosen directly.
      const withTimeout = `${bouncer.databaseUrl}?statement_timeout=1000`;
      assert.match((await refusal(withTimeout)).detail ?? '', /unsupported startup parameter: statement_timeout/);
      const withOptions = `${bouncer.databaseUrl}?options=${encodeURIComponent('-c search_path=elsewhere')}`;
      assert.match((await refusal(withOptions)).detail ?? '', /unsupported startup parameter: options/);
      const database = uniqueName('petstore_missing');
      assert.match(
        (await refusal(withDatabase(bouncer.databaseUrl, database))).detail ?? '',
        new RegExp(`database "${database}" does not exist`),
      );
    },
  );

  it('the CLI prints it', { skip: bouncer.skip }, async () => {
    const withOptions = `${bouncer.databaseUrl}?options=${encodeURIComponent('-c search_path=elsewhere')}`;
    const result = await runCliProcess(['account', 'create', '--name', 'acme', '--plan', 'free'], {
      DATABASE_URL: withOptions,
    });
    assert.notEqual(result.status, 0);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /storage is unavailable: the database server refused the connection: unsupported startup parameter: options/,
    );
  });
});

for (const backend of [postgres, bouncer]) {
  describe(`PostgreSQL store: ${backend.label}`, { skip: backend.skip }, () => {
    let url = '';
    let store: Store;
    let admin: Client;

    before(async () => {
      url = await backend.freshDatabaseUrl();
      store = openPostgresStore(url, { poolSize: 4, timeoutMs: TIMEOUT_MS });
      await store.migrate();
      admin = await connected(directUrl(url));
    });

    after(async () => {
      await store?.close();
      await admin?.end();
    });

    /** Statements of the store's connections waiting for a lock on this database. */
    const waitingStatements = async (): Promise<number> => {
      const { rows } = await admin.query<{ count: string }>(
        `SELECT count(*) AS count FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'petstore' AND wait_event_type = 'Lock'`,
      );
      return Number(rows[0]?.count);
    };

    async function whileLocked(table: string, work: () => Promise<void>): Promise<void> {
      await admin.query('BEGIN');
      try {
        await admin.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        await work();
      } finally {
        await admin.query('ROLLBACK');
      }
    }

    it('a single statement over the timeout: 503 for the caller, and the server stops it too', async () => {
      await whileLocked('pets', async () => {
        const error = await store.pets.get(1).catch((caught: unknown) => caught);
        assert.ok(error instanceof StorageUnavailableError, `expected StorageUnavailableError, got ${String(error)}`);
        assert.match(error.message, /did not answer in time/);
        // The lock is still held: only a cancel ends the wait.
        await eventually('the cancel of the abandoned statement', async () => (await waitingStatements()) === 0);
      });
      assert.equal(await store.pets.get(1), undefined, 'the store carries on');
    });

    it('a statement of a transaction over the timeout: 503, and the server stops it too', async () => {
      await whileLocked('api_keys', async () => {
        const write = store.keys.recordLastUsed(new Map([['key_a', Date.now()]]), 'waiting');
        await assert.rejects(write, StorageUnavailableError);
        await eventually('the end of the statement', async () => (await waitingStatements()) === 0);
      });
      assert.equal(await store.keys.recordLastUsed(new Map([['key_a', Date.now()]]), 'waiting'), true);
    });

    it('leaves no setting behind on the server connections it used', async () => {
      // Transactions set their timeouts with SET LOCAL; a later client of the same server connection
      // (through PgBouncer: of the pool's most recently used one) sees the server's defaults.
      await Promise.all([store.keys.recordLastUsed(new Map([['key_b', Date.now()]]), 'waiting'), store.ping()]);
      const client = await connected(url);
      try {
        const { rows } = await client.query<{ timeout: string; idle: string }>(
          `SELECT current_setting('statement_timeout') AS timeout,
                  current_setting('idle_in_transaction_session_timeout') AS idle`,
        );
        assert.deepEqual(rows[0], { timeout: '0', idle: '0' });
      } finally {
        await client.end();
      }
    });

    it('a migration waits for an earlier release holding the migrations lock for its session', async () => {
      const fresh = await backend.freshDatabaseUrl();
      const older = await connected(directUrl(fresh));
      const migrating = openPostgresStore(fresh, { poolSize: 1, timeoutMs: TIMEOUT_MS });
      try {
        // The earlier release's lock: the same key, but for the session.
        await older.query(
          "SELECT pg_advisory_lock(hashtextextended('petstore:migrations:' || coalesce(current_schema(), ''), 0))",
        );
        let settled = false;
        const migration = migrating.migrate().finally(() => (settled = true));
        await eventually('the migration waiting for the lock', async () => {
          const { rows } = await older.query<{ count: string }>(
            `SELECT count(*) AS count FROM pg_locks l JOIN pg_database d ON d.oid = l.database
              WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()`,
          );
          return Number(rows[0]?.count) === 1;
        });
        assert.equal(settled, false);
        await older.query('SELECT pg_advisory_unlock_all()');
        assert.equal(await migration, MIGRATION_NAMES.length);
      } finally {
        await migrating.close();
        await older.end();
      }
    });
  });
}

describe('the service and the CLI through PgBouncer', { skip: bouncer.skip }, () => {
  it('petstore migrate run by several processes at once applies each migration once', async () => {
    const env = { DATABASE_URL: await bouncer.freshDatabaseUrl() };
    const results = await Promise.all([1, 2, 3].map(() => runCliProcess(['migrate', '--json'], env)));
    for (const result of results) assert.equal(result.status, 0, result.stderr);
    const applied = results.map((result) => (JSON.parse(result.stdout) as { applied: number }).applied);
    assert.deepEqual(
      applied.sort((a, b) => a - b),
      [0, 0, MIGRATION_NAMES.length],
    );
  });

  it('petstore account create and key create work, and a server on the same URL serves the key', async () => {
    const env = { DATABASE_URL: await bouncer.freshDatabaseUrl() };
    const created = await runCliProcess(['account', 'create', '--name', 'acme', '--plan', 'pro'], env);
    assert.equal(created.status, 0, created.stderr);
    const keyed = await runCliProcess(['key', 'create', '--account', 'acme'], env);
    assert.equal(keyed.status, 0, keyed.stderr);
    const key = keyed.stdout.trim().split('\n').at(-1) ?? '';
    assert.match(key, /^pst_/);

    const server = await startServerProcess({ ...env, STORAGE_TIMEOUT_MS: '5000' });
    try {
      const posted = await request(server, '/v1/pets', {
        method: 'POST',
        key,
        json: { name: 'Rex', categoryId: 7, status: 'available' },
      });
      assert.equal(posted.status, 201, posted.text);
      const pet = posted.json<Pet>();
      const listed = await request(server, '/v1/pets?status=available', { key });
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.json<Pet[]>().map((each) => each.id),
        [pet.id],
      );
      const ready = await request(server, '/readyz');
      assert.equal(ready.status, 200, ready.text);
    } finally {
      await server.kill();
    }
  });
});
