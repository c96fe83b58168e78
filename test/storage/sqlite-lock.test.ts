import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StorageUnavailableError } from '../../src/errors.ts';
import { openSqliteStore } from '../../src/storage/sqlite-dialect.ts';
import { request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { holdWriteLock, watchEventLoop } from '../support/sqlite-write-lock.ts';
import { checkWriteBackRound, createPetsAndCacheReads, postPet, timed } from '../support/storage-outage.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Another process holding the SQLite file's write lock (a backup, a migration, a CLI command) for
 * longer than the storage timeout: creations get 503 within the timeout, everything else is
 * served meanwhile, and the event loop of the process is never blocked waiting for the lock.
 */
const TIMEOUT_MS = 400;
/** Generous: the machine running the tests may be loaded; the old busy wait answered after the whole lock. */
const MARGIN_MS = 400;
const LOCK_HELD_MS = 2500;
/** Reads never wait for the lock: under the storage timeout, even on a loaded machine. */
const READ_MS = TIMEOUT_MS;
/** Far from the lock's 2.5 s: a blocking busy wait shows as a gap of about that length. */
const LONGEST_LOOP_GAP_MS = 500;

/** The app on a SQLite file in a directory of its own, which `close()` removes with it; a business key's headers. */
async function startOnOwnFile(options: { readonly clock?: ManualClock; readonly env: Record<string, string> }) {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-lock-'));
  const path = join(directory, 'petstore.db');
  const app = await startTestApp({ ...options, env: { DATABASE_URL: `sqlite:${path}`, ...options.env } });
  const { key, keyId } = await app.newKey({ plan: 'business' });
  const close = async (): Promise<void> => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  };
  return { app, path, keyId, headers: { authorization: `Bearer ${key}` }, close };
}

/**
 * Runs `during` while another process holds the file's write lock for `heldMs`, waits for the lock's
 * release, and checks that the event loop was never blocked meanwhile.
 */
async function whileLockHeld(path: string, heldMs: number, during: () => Promise<void>): Promise<void> {
  const loop = watchEventLoop();
  const locker = await holdWriteLock(path, heldMs);
  try {
    const exited = once(locker, 'exit');
    await during();
    await exited;
    const longestGap = loop.stop();
    assert.ok(longestGap < LONGEST_LOOP_GAP_MS, `the event loop was blocked for ${Math.round(longestGap)} ms`);
  } finally {
    loop.stop();
    locker.kill();
  }
}

describe('SQLite file locked by another process', () => {
  let path: string;
  let app: TestApp;
  let headers: Record<string, string>;
  let close: () => Promise<void>;

  before(async () => {
    ({ app, path, headers, close } = await startOnOwnFile({ env: { STORAGE_TIMEOUT_MS: String(TIMEOUT_MS) } }));
  });
  after(() => close());

  const post = (name: string, key?: string): Promise<HttpAnswer> =>
    postPet(app, headers, { name, status: 'available', idempotencyKey: key });

  it('creations get 503 within the timeout, reads and health are served, the loop never blocks', async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await post(`before-${i}`)).status, 201);
    assert.equal((await request(app, '/v1/pets?limit=2', { headers })).status, 200);
    const name = `during-${randomUUID()}`;
    const key = randomUUID();

    const unavailableBefore = await storageUnavailableCount();
    await whileLockHeld(path, LOCK_HELD_MS, () => whileLocked(name, key));

    // Both creations' 503s are counted for the alert on storage outages.
    assert.equal((await storageUnavailableCount()) - unavailableBefore, 2);

    // Once the lock is released, creations succeed; the 503 left nothing behind for the key.
    assert.equal((await post(name)).status, 201);
    const retried = await post(name, key);
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    const replayed = await post(name, key);
    assert.equal(replayed.status, 201);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    const all = (await request(app, '/v1/pets?limit=100', { headers })).json<{ name: string }[]>();
    assert.equal(all.filter((pet) => pet.name === name).length, 2);
    assert.equal(all.filter((pet) => pet.name === 'locker').length, 1);
  });

  async function storageUnavailableCount(): Promise<number> {
    const { values } = await app.services.metrics.storageUnavailable.get();
    return values.reduce((sum, sample) => sum + sample.value, 0);
  }

  async function whileLocked(name: string, key: string): Promise<void> {
    const lockedAt = performance.now();
    const [plain, idempotent, health, fullPage, lastPage] = await Promise.all([
      timed(post(name)),
      timed(post(name, key)),
      timed(request(app, '/healthz')),
      timed(request(app, '/v1/pets?limit=2', { headers })),
      timed(request(app, '/v1/pets?limit=100', { headers })),
    ]);
    // The lock is a cause the log names; the client learns what matters to it: a retry may duplicate the pet.
    const unconfirmed = 'storage did not confirm the creation, so the pet may have been created; ';
    const messages = [
      `${unconfirmed}a retry may add it twice. ` +
        'Send an Idempotency-Key with every creation: a retry with the same key is safe',
      `${unconfirmed}retrying with the same Idempotency-Key and body is safe: ` +
        'it answers with that pet, or creates it once',
    ];
    for (const [index, created] of [plain, idempotent].entries()) {
      assert.equal(created.response.status, 503);
      assert.deepEqual(created.response.json(), { code: 'service_unavailable', message: messages[index], status: 503 });
      assert.ok(created.ms < TIMEOUT_MS + MARGIN_MS, `503 after ${Math.round(created.ms)} ms`);
    }
    for (const read of [health, fullPage, lastPage]) {
      assert.equal(read.response.status, 200);
      assert.ok(read.ms < READ_MS, `a read took ${Math.round(read.ms)} ms while the file was locked`);
    }
    // The last, partial page is read from storage: in WAL mode the writer does not block readers.
    assert.equal(lastPage.response.json<unknown[]>().length, 3);
    assert.ok(performance.now() - lockedAt < LOCK_HELD_MS, 'the lock was still held during the requests');
  }
});

/**
 * The write-back of keys' last-used times (KeyVerifier.flushLastUsed, which a timer calls every few
 * seconds) while another process holds the write lock for longer than two of its intervals. It is a
 * background write: it skips and keeps its batch instead of waiting, and no request waits for it.
 * Every request looks its key up in storage (KEY_CACHE_TTL_MS=0), so authentication is a read too.
 */
describe('SQLite file locked by another process while last-used times are written back', () => {
  /** Long enough that a read held up by a waiting write-back shows: it would take about this long. */
  const TIMEOUT_MS = 1000;
  /** A read answers in milliseconds; this is far above the noise of a loaded machine. */
  const READ_BOUND_MS = 500;
  const WRITE_MARGIN_MS = 250;
  /** Two rounds of a write-back and requests, each up to the timeout for its 503s, and some slack. */
  const HELD_MS = 2 * TIMEOUT_MS + 1500;
  const START = Date.parse('2026-06-01T12:00:00Z');
  const LOCKED_AT = START + 60_000;

  const clock = new ManualClock(START);
  let path: string;
  let app: TestApp;
  let keyId: string;
  let headers: Record<string, string>;
  let close: () => Promise<void>;
  let ids: number[];

  before(async () => {
    const env = { STORAGE_TIMEOUT_MS: String(TIMEOUT_MS), KEY_CACHE_TTL_MS: '0' };
    ({ app, path, keyId, headers, close } = await startOnOwnFile({ clock, env }));
    ids = await createPetsAndCacheReads(app, headers, 5, 'available');
    await app.services.keyVerifier.flushLastUsed();
  });
  after(() => close());

  const post = (name: string, key?: string): Promise<HttpAnswer> =>
    postPet(app, headers, { name, status: 'available', idempotencyKey: key });

  /** A write-back started as the timer starts it, and requests of every kind while it runs. */
  async function round(uncachedPetId: number): Promise<void> {
    await checkWriteBackRound(app, {
      headers,
      reads: {
        cachedPage: '/v1/pets?limit=2',
        uncachedPage: '/v1/pets?limit=100',
        cachedPet: `/v1/pets/${ids[0]}`,
        uncachedPet: `/v1/pets/${uncachedPetId}`,
        usage: '/v1/usage',
      },
      writes: { plain: () => post('during'), idempotent: () => post('during', randomUUID()) },
      limits: { readMs: READ_BOUND_MS, writeMs: TIMEOUT_MS + WRITE_MARGIN_MS, writeBackMs: READ_BOUND_MS },
      whileOut: 'while the file was locked',
    });
  }

  it('reads, key lookups and 503s keep their usual latency; the skipped batch is written afterwards', async () => {
    await whileLockHeld(path, HELD_MS, async () => {
      const lockedAt = performance.now();
      clock.set(LOCKED_AT);
      // Gives the write-back a batch: this request's key was used at LOCKED_AT.
      assert.equal((await request(app, '/v1/usage', { headers })).status, 200);
      await round(ids[2] as number);
      await round(ids[3] as number);
      assert.ok(performance.now() - lockedAt < HELD_MS, 'the lock was still held during the requests');
    });

    // The batches the lock made the write-back skip were kept: the next write-back records LOCKED_AT.
    await app.services.keyVerifier.flushLastUsed();
    assert.equal((await app.services.store.keys.findById(keyId))?.lastUsedAt, LOCKED_AT);
  });
});

/**
 * Any write through the query layer (a ban, an account, a key) waits for the lock on timers; reads
 * go to their own connection and never wait behind it, in this process's query layer either.
 */
describe('a write of the query layer waiting for the lock', () => {
  const TIMEOUT_MS = 1000;
  const READ_BOUND_MS = 500;
  const NOW = Date.parse('2026-06-01T12:00:00Z');

  it('holds up no read while it waits', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'petstore-lock-'));
    const path = join(directory, 'petstore.db');
    const store = openSqliteStore(path, { timeoutMs: TIMEOUT_MS });
    try {
      await store.migrate();
      await store.pets.create({ name: 'rex', categoryId: 1n, status: null }, NOW);
      const locker = await holdWriteLock(path, TIMEOUT_MS + 1000);
      const exited = once(locker, 'exit');
      const waiting = store.accounts.create({ name: 'late', plan: 'free', perMinute: null, perDay: null }, NOW);
      const failed = assert.rejects(waiting, StorageUnavailableError);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      const [pets, accounts] = await Promise.all([
        store.pets.list({ afterId: 0, limit: 10, status: undefined }),
        store.accounts.count(),
        store.keys.findPrincipalByHash('no-such-hash'),
      ]);
      const ms = performance.now() - started;
      assert.ok(ms < READ_BOUND_MS, `the reads took ${Math.round(ms)} ms behind a waiting write`);
      assert.equal(pets.length, 1);
      assert.equal(accounts, 0);
      await failed;
      await exited;
    } finally {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
