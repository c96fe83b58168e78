import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { IdempotencyInFlightError, StorageUnavailableError } from '../../src/errors.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { openPostgresStore } from '../../src/storage/postgres-dialect.ts';
import type { Store } from '../../src/domain/store.ts';
import { postgresBackend } from '../support/backends.ts';

/** What only PostgreSQL has: outages, timeouts, a pool that must heal, schemas chosen by URL. */

const TIMEOUT_MS = 500;
const SLACK_MS = 1000;

async function rejectsUnavailableWithin(promise: Promise<unknown>, limitMs: number): Promise<void> {
  const started = performance.now();
  await assert.rejects(promise, StorageUnavailableError);
  const elapsed = performance.now() - started;
  assert.ok(elapsed < limitMs, `rejected after ${Math.round(elapsed)} ms, expected under ${limitMs} ms`);
}

describe('PostgreSQL store without a reachable server', () => {
  it('rejects store calls, ping and migrate with StorageUnavailableError when the port is closed', async () => {
    const store = openPostgresStore('postgres://postgres@127.0.0.1:1/test', { poolSize: 2, timeoutMs: TIMEOUT_MS });
    try {
      await rejectsUnavailableWithin(store.pets.get(1), TIMEOUT_MS + SLACK_MS);
      await rejectsUnavailableWithin(store.ping(), TIMEOUT_MS + SLACK_MS);
      await rejectsUnavailableWithin(
        store.pets.createIdempotent({ name: 'x', categoryId: 1n, status: null }, Date.now(), {
          accountId: 1,
          key: 'k',
          fingerprint: 'fp',
          respond: () => ({ statusCode: 201, body: '{}' }),
        }),
        TIMEOUT_MS + SLACK_MS,
      );
      await rejectsUnavailableWithin(store.migrate(), TIMEOUT_MS + SLACK_MS);
      const error = await store.accounts.count().catch((caught: unknown) => caught);
      assert.ok(error instanceof StorageUnavailableError);
      assert.equal(error.code, 'service_unavailable');
      assert.ok(error.cause instanceof Error, 'the driver error is kept as the cause');
    } finally {
      await store.close();
    }
  });

  describe('when the server accepts connections but never answers', () => {
    let server: Server;
    const sockets = new Set<Socket>();
    let url = '';

    before(async () => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      assert.ok(address !== null && typeof address === 'object');
      url = `postgres://postgres@127.0.0.1:${address.port}/test`;
    });

    after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('rejects within the timeout, and ping does too', async () => {
      const store = openPostgresStore(url, { poolSize: 2, timeoutMs: TIMEOUT_MS });
      try {
        await rejectsUnavailableWithin(store.accounts.list(), TIMEOUT_MS + SLACK_MS);
        await rejectsUnavailableWithin(store.ping(), TIMEOUT_MS + SLACK_MS);
        // More callers than connections: the queued ones time out too.
        await Promise.all(
          Array.from({ length: 5 }, () => rejectsUnavailableWithin(store.pets.get(1), 2 * TIMEOUT_MS + SLACK_MS)),
        );
      } finally {
        await store.close();
      }
    });
  });
});

const postgres = await postgresBackend();

describe('PostgreSQL store against a server', { skip: postgres.skip }, () => {
  let store: Store;
  let admin: Client;
  /** Tables in `public` before and after this suite's store migrated (the database is shared). */
  let publicBefore: string[];
  let publicAfter: string[];
  const schemaOf = (url: string): string => decodeURIComponent(url).replace(/^.*search_path=/, '');
  const publicTables = async (): Promise<string[]> =>
    (
      await admin.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      )
    ).rows.map((row) => row.table_name);

  before(async () => {
    admin = new Client({ connectionString: postgres.databaseUrl });
    await admin.connect();
    store = openPostgresStore(postgres.databaseUrl, { poolSize: 4, timeoutMs: TIMEOUT_MS });
    publicBefore = await publicTables();
    await store.migrate();
    publicAfter = await publicTables();
  });

  after(async () => {
    await store?.close();
    await admin?.end();
    await postgres.cleanup();
  });

  it('openStore accepts postgres:// and postgresql:// URLs', async () => {
    for (const url of [postgres.databaseUrl, postgres.databaseUrl.replace(/^postgres:/, 'postgresql:')]) {
      const opened = await openStore({ databaseUrl: url, pgPoolSize: 1, storageTimeoutMs: 2000 });
      try {
        assert.equal(opened.backend, 'postgres');
        assert.equal(await opened.migrate(), 0);
        await opened.ping();
      } finally {
        await opened.close();
      }
    }
  });

  it('creates its tables in the schema named by the URL options, with bigint columns and checks', async () => {
    const schema = schemaOf(postgres.databaseUrl);
    const { rows } = await admin.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_identity: string;
    }>(
      `SELECT table_name, column_name, data_type, is_identity FROM information_schema.columns
        WHERE table_schema = $1 AND column_name IN ('id', 'category_id', 'created_at')
        ORDER BY table_name, column_name`,
      [schema],
    );
    const columns = new Map(rows.map((row) => [`${row.table_name}.${row.column_name}`, row]));
    assert.equal(columns.get('pets.id')?.data_type, 'bigint');
    assert.equal(columns.get('pets.id')?.is_identity, 'YES');
    assert.equal(columns.get('accounts.id')?.is_identity, 'YES');
    assert.equal(columns.get('pets.category_id')?.data_type, 'bigint');
    assert.equal(columns.get('pets.created_at')?.data_type, 'bigint');
    await assert.rejects(
      admin.query(`INSERT INTO ${schema}.pets (name, category_id, status, created_at) VALUES ('x', 1, 'lost', 0)`),
      /check constraint/,
    );
    await assert.rejects(
      admin.query(`INSERT INTO ${schema}.accounts (name, plan, created_at) VALUES ('x', 'gold', 0)`),
      /check constraint/,
    );
    await assert.rejects(
      admin.query(`INSERT INTO ${schema}.pets (id, name, category_id, created_at) VALUES (1, 'x', 1, 0)`),
      /non-DEFAULT value/,
    );
    assert.deepEqual(publicAfter, publicBefore, 'nothing lands in public');
  });

  it('a statement over the timeout rejects with StorageUnavailableError, and the store carries on', async () => {
    const schema = schemaOf(postgres.databaseUrl);
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE ${schema}.pets IN ACCESS EXCLUSIVE MODE`);
    try {
      const started = performance.now();
      const error = await store.pets
        .list({ afterId: 0, limit: 1, status: undefined })
        .catch((caught: unknown) => caught);
      assert.ok(error instanceof StorageUnavailableError, `expected StorageUnavailableError, got ${String(error)}`);
      assert.ok(performance.now() - started < TIMEOUT_MS + SLACK_MS);
      assert.match(error.message, /did not answer in time/);
    } finally {
      await admin.query('ROLLBACK');
    }
    assert.deepEqual(await store.pets.list({ afterId: 0, limit: 1, status: undefined }), []);
  });

  it('survives its connections being killed and reconnects by itself', async () => {
    const application = `petstore_test_kill_${process.pid}`;
    const idleErrors: Error[] = [];
    const url = `${postgres.databaseUrl}&application_name=${application}`;
    const victim = openPostgresStore(url, {
      poolSize: 3,
      timeoutMs: 2000,
      onIdleError: (error) => idleErrors.push(error),
    });
    try {
      await Promise.all([victim.ping(), victim.ping(), victim.ping()]);
      const killed = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [application],
      );
      assert.ok((killed.rowCount ?? 0) >= 1);
      // Give the idle connections time to notice.
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(idleErrors.length >= 1, 'idle connection errors are reported, not thrown');
      await victim.ping();
      const pet = await victim.pets.create(
        { name: 'after the storm', categoryId: 2n ** 60n, status: 'sold' },
        Date.now(),
      );
      assert.deepEqual(await victim.pets.get(pet.id), pet);
    } finally {
      await victim.close();
    }
  });

  it('a creation whose key another request holds past the wait answers idempotency_in_flight, in time', async () => {
    const account = await store.accounts.create(
      { name: `in-flight-${Date.now()}`, plan: 'free', perMinute: null, perDay: null },
      Date.now(),
    );
    const request = {
      accountId: account.id,
      key: 'held',
      fingerprint: 'fp',
      respond: () => ({ statusCode: 201, body: '{}' }),
    };
    const pet = { name: 'held', categoryId: 1n, status: null };
    const lock = `pg_advisory_xact_lock(hashtextextended($1 || coalesce(current_schema(), ''), 0))`;
    await admin.query('BEGIN');
    try {
      await admin.query(`SELECT ${lock}`, [`petstore:idempotency:${account.id}:held:`]);
      const started = performance.now();
      await assert.rejects(store.pets.createIdempotent(pet, Date.now(), request), IdempotencyInFlightError);
      const elapsed = performance.now() - started;
      assert.ok(
        elapsed >= TIMEOUT_MS / 2 && elapsed < TIMEOUT_MS + SLACK_MS,
        `answered after ${Math.round(elapsed)} ms`,
      );
    } finally {
      await admin.query('ROLLBACK');
    }
    assert.equal((await store.pets.createIdempotent(pet, Date.now(), request)).state, 'created');
  });

  it('close() is safe to call twice', async () => {
    const closing = openPostgresStore(postgres.databaseUrl, { poolSize: 1, timeoutMs: 2000 });
    await closing.ping();
    await closing.close();
    await closing.close();
  });
});
