import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqliteStore } from '../../src/storage/sqlite-dialect.ts';
import { request } from '../support/http-client.ts';
import { startServerProcess } from '../support/server-process.ts';

/**
 * What a SIGKILL costs the usage history: the counts of the last flush interval at most. The server
 * runs as operators run it, a process over a SQLite file, flushing every FLUSH_MS.
 */
const FLUSH_MS = 300;
const HOUR = 3_600_000;

describe('the usage history across a SIGKILL', () => {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-usage-crash-'));
  const database = join(directory, 'petstore.db');
  after(() => rmSync(directory, { recursive: true, force: true }));

  async function storedRequests(): Promise<number> {
    const store = openSqliteStore(database, { timeoutMs: 2000 });
    try {
      const now = Date.now();
      const buckets = await store.usage.series({ accountId: undefined, from: 0, to: now + HOUR, bucketMs: HOUR });
      return buckets.reduce((sum, bucket) => sum + bucket.count, 0);
    } finally {
      await store.close();
    }
  }

  it('loses at most the requests of the last flush interval', async () => {
    const env = { DATABASE_URL: `sqlite:${database}`, DEMO_BOOTSTRAP: 'true', USAGE_FLUSH_MS: String(FLUSH_MS) };
    const server = await startServerProcess(env);
    const key = /pst_[A-Za-z0-9]{36}/.exec(server.output())?.[0];
    assert.ok(key, 'the demo key is printed on first start');
    try {
      for (let i = 0; i < 40; i += 1) assert.equal((await request(server, '/v1/pets?limit=1', { key })).status, 200);
      // Two intervals and a margin: every request above is in a flush that has completed.
      await new Promise((resolve) => setTimeout(resolve, 2 * FLUSH_MS + 400));
      for (let i = 0; i < 10; i += 1) assert.equal((await request(server, '/v1/pets?limit=1', { key })).status, 200);
    } finally {
      await server.kill('SIGKILL');
    }
    const stored = await storedRequests();
    assert.ok(stored >= 40, `the requests older than one flush interval are all stored (${stored} of 50)`);
    assert.ok(stored <= 50, `nothing is counted twice (${stored} of 50)`);

    // A graceful stop loses nothing: the last flush runs at shutdown.
    const again = await startServerProcess({ ...env, USAGE_FLUSH_MS: '600000' });
    try {
      for (let i = 0; i < 7; i += 1) assert.equal((await request(again, '/v1/pets?limit=1', { key })).status, 200);
    } finally {
      await again.kill('SIGTERM');
    }
    assert.equal(await storedRequests(), stored + 7);
  });
});
