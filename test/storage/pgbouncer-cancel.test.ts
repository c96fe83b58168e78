import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { Client } from 'pg';
import { StorageUnavailableError } from '../../src/errors.ts';
import { openPostgresStore } from '../../src/storage/postgres-dialect.ts';
import type { Store } from '../../src/domain/store.ts';
import { POSTGRES_TEST_URL } from '../support/backends.ts';
import { pgBouncerSkip, startPgBouncer, withDatabase, type RunningPgBouncer } from '../support/pgbouncer.ts';
import { StartedParts } from '../support/started-parts.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

/**
 * Cancel requests through PgBouncer while PostgreSQL drops packets (a proxy between the two goes
 * silent). PgBouncer 1.18.0 exits with `disconnect_client(): bad client state` when the sender of
 * a cancel it has forwarded hangs up before PostgreSQL takes the cancel, which PostgreSQL does once
 * the network is back. The store keeps each cancel's connection open until PgBouncer closes it, and
 * sends no further cancel while one goes unanswered.
 */

const TIMEOUT_MS = 300;
/** The store waits this long for a cancel before it releases the connection (CancelRequests). */
const CANCEL_WAIT_MS = TIMEOUT_MS;
/** Far more than PgBouncer takes to act on what it was sent (about a millisecond here). */
const SETTLE_MS = 500;

const skip = await pgBouncerSkip();

async function connected(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Resolves once `check` holds; fails the test when it has not within `limitMs`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, limitMs = 5000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('cancel requests through PgBouncer while PostgreSQL is unreachable', { skip }, () => {
  let proxy: TcpProxy;
  let bouncer: RunningPgBouncer;
  let admin: Client;
  let store: Store;
  let url = '';
  const database = `petstore_test_${randomBytes(6).toString('hex')}`;

  /** Lines of PgBouncer's log matching `pattern`. */
  const logged = (pattern: RegExp): number =>
    bouncer
      .log()
      .split('\n')
      .filter((line) => pattern.test(line)).length;
  /** A cancel request's connection to PgBouncer, which has no user, closed for whatever reason. */
  const cancelsClosed = (): number => logged(/C-0x[0-9a-f]+: \S+\/\(nouser\)@.* closing because/);
  const forwarded = (): number => logged(/started sending cancel request/);

  function assertPgBouncerUp(): void {
    assert.equal(bouncer.exitStatus(), undefined, `PgBouncer exited:\n${bouncer.log().slice(-1500)}`);
    assert.equal(logged(/FATAL/), 0, bouncer.log().slice(-1500));
  }

  /** PgBouncer keeps two server connections open: each abandoned statement below is sent on one of them. */
  async function warmTwoServerConnections(): Promise<void> {
    const clients = await Promise.all([connected(url), connected(url)]);
    try {
      await Promise.all(clients.map((client) => client.query('SELECT pg_sleep(0.05)')));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  }

  before(async () => {
    admin = await connected(POSTGRES_TEST_URL);
    await admin.query(`CREATE DATABASE ${database} TEMPLATE template0`);
  });

  after(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  const parts = new StartedParts();
  /** Whether this test's parts all started: only then is there a proxy to forward through at its end. */
  let started = false;

  beforeEach(async () => {
    parts.reset();
    started = false;
    proxy = await parts.start(
      'a TCP proxy to PostgreSQL',
      () => startTcpProxy(5432),
      (open) => open.close(),
    );
    bouncer = await parts.start(
      'PgBouncer',
      () => startPgBouncer({ upstreamPort: proxy.port }),
      (running) => running.stop(),
    );
    url = withDatabase(bouncer.url, database);
    store = await parts.start(
      'the store through PgBouncer',
      async () => {
        const opened = openPostgresStore(url, { poolSize: 2, timeoutMs: TIMEOUT_MS });
        // The parts keep only what started: a store that cannot migrate is closed here.
        await opened.migrate().catch(async (error: unknown) => {
          await opened.close();
          throw error;
        });
        return opened;
      },
      (opened) => opened.close(),
    );
    started = true;
  });

  afterEach(async () => {
    // What a test left silent is forwarded again, so that the store's and PgBouncer's goodbyes get through.
    if (started) proxy.forward();
    await parts.stopAll();
  });

  it('an abandoned statement: its cancel is forwarded, and PgBouncer stays up once PostgreSQL takes it', async () => {
    await warmTwoServerConnections();
    proxy.silence();
    await assert.rejects(store.pets.get(1), StorageUnavailableError);
    await eventually('the cancel forwarded to PostgreSQL', () => forwarded() === 1);
    // Well past the store's wait, the network comes back and PostgreSQL takes the cancel.
    await sleep(CANCEL_WAIT_MS + SETTLE_MS);
    proxy.forward();
    await eventually(
      'PostgreSQL taking the cancel',
      () =>
        logged(/S-0x.* closing because: successfully sent cancel request/) === 1 || bouncer.exitStatus() !== undefined,
    );
    await sleep(SETTLE_MS);
    assertPgBouncerUp();
    assert.equal(cancelsClosed(), 1);
    assert.equal(
      logged(/\(nouser\)@.* closing because: successfully sent cancel request/),
      1,
      'the store hung up on the cancel before PostgreSQL had taken it',
    );
    assert.equal(await store.pets.get(1), undefined, 'the store carries on');
    assertPgBouncerUp();
  });

  it('sends no further cancel while one is unanswered, and cancels again once it was answered', async () => {
    await warmTwoServerConnections();
    const [cancelsBefore, forwardedBefore] = [cancelsClosed(), forwarded()];
    proxy.silence();
    await assert.rejects(store.pets.get(1), StorageUnavailableError);
    await eventually('the first cancel forwarded', () => forwarded() === forwardedBefore + 1);
    await sleep(CANCEL_WAIT_MS + SETTLE_MS);
    // On PgBouncer's other server connection, which is as silent.
    await assert.rejects(store.pets.get(2), StorageUnavailableError);
    // The store gives up on the statement TIMEOUT_MS after the caller did; a cancel would be forwarded at once.
    await sleep(TIMEOUT_MS + CANCEL_WAIT_MS + SETTLE_MS);
    assert.equal(forwarded(), forwardedBefore + 1, 'a second cancel was forwarded');
    assert.equal(cancelsClosed(), cancelsBefore, 'a second cancel was sent, or the first hung up');

    proxy.forward();
    await eventually('the first cancel answered', () => cancelsClosed() === cancelsBefore + 1);
    assertPgBouncerUp();
    // Reachable again: a statement waiting for a lock past the timeout is cancelled on the server.
    const lockHolder = await connected(withDatabase(POSTGRES_TEST_URL, database));
    try {
      await lockHolder.query('BEGIN; LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      await assert.rejects(store.pets.get(3), StorageUnavailableError);
      await eventually('the waiting statement cancelled', async () => {
        const { rows } = await lockHolder.query<{ count: string }>(
          `SELECT count(*) AS count FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'petstore' AND wait_event_type = 'Lock'`,
        );
        return Number(rows[0]?.count) === 0;
      });
      assert.equal(forwarded(), forwardedBefore + 2);
    } finally {
      await lockHolder.query('ROLLBACK');
      await lockHolder.end();
    }
    assertPgBouncerUp();
  });
});
