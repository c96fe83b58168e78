import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request, type HttpAnswer } from '../support/http-client.ts';
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

/** A child process that takes the write lock, says so, and holds it for `holdMs`. */
async function holdWriteLock(path: string, holdMs: number): Promise<ChildProcess> {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(${JSON.stringify(path)});
    db.exec('BEGIN IMMEDIATE');
    db.exec("INSERT INTO pets (name, category_id, status, created_at) VALUES ('locker', 1, NULL, 0)");
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['--no-warnings', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  assert.equal(chunk.toString().trim(), 'locked');
  return child;
}

/** The longest gap between ticks of a 10 ms timer, i.e. the longest the event loop was blocked. */
function watchEventLoop(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return longest;
    },
  };
}

async function timed(answer: Promise<HttpAnswer>): Promise<{ response: HttpAnswer; ms: number; body: unknown }> {
  const started = performance.now();
  const response = await answer;
  return { response, ms: performance.now() - started, body: response.json() };
}

describe('SQLite file locked by another process', () => {
  let directory: string;
  let path: string;
  let app: TestApp;
  let headers: Record<string, string>;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-lock-'));
    path = join(directory, 'petstore.db');
    app = await startTestApp({ env: { DATABASE_URL: `sqlite:${path}`, STORAGE_TIMEOUT_MS: String(TIMEOUT_MS) } });
    headers = { authorization: `Bearer ${(await app.newKey({ plan: 'business' })).key}` };
  });

  after(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const post = (name: string, key?: string): Promise<HttpAnswer> =>
    request(app, '/v1/pets', {
      method: 'POST',
      headers: { ...headers, ...(key ? { 'idempotency-key': key } : {}) },
      json: { name, categoryId: 1, status: 'available' },
    });

  it('creations get 503 within the timeout, reads and health are served, the loop never blocks', async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await post(`before-${i}`)).status, 201);
    assert.equal((await request(app, '/v1/pets?limit=2', { headers })).status, 200);
    const name = `during-${randomUUID()}`;
    const key = randomUUID();

    const loop = watchEventLoop();
    const locker = await holdWriteLock(path, LOCK_HELD_MS);
    try {
      const exited = once(locker, 'exit');
      await whileLocked(name, key);
      await exited;
      const longestGap = loop.stop();
      assert.ok(longestGap < LONGEST_LOOP_GAP_MS, `the event loop was blocked for ${Math.round(longestGap)} ms`);
    } finally {
      loop.stop();
      locker.kill();
    }

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
      assert.deepEqual(created.body, { code: 'service_unavailable', message: messages[index], status: 503 });
      assert.ok(created.ms < TIMEOUT_MS + MARGIN_MS, `503 after ${Math.round(created.ms)} ms`);
    }
    for (const read of [health, fullPage, lastPage]) {
      assert.equal(read.response.status, 200);
      assert.ok(read.ms < READ_MS, `a read took ${Math.round(read.ms)} ms while the file was locked`);
    }
    // The last, partial page is read from storage: in WAL mode the writer does not block readers.
    assert.equal((lastPage.body as unknown[]).length, 3);
    assert.ok(performance.now() - lockedAt < LOCK_HELD_MS, 'the lock was still held during the requests');
  }
});
