import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/composition-root.ts';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { holdWriteLock } from '../support/sqlite-write-lock.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Another process holds the SQLite file's write lock (a backup, a CLI command): storage refuses
 * every write, so a usage flush cannot store its counts. It is `failed` from the first one, as the
 * warning in the log says, not `skipped` as a flush that found this instance's writer busy is; its
 * counts wait for the next flush.
 */
const START = Date.parse('2026-06-01T12:00:30Z');
const TIMEOUT_MS = 300;
/** Long enough for the flushes below, each answered at once or within TIMEOUT_MS. */
const LOCK_HELD_MS = 3000;

describe('usage flushes while another process holds the SQLite write lock', () => {
  let directory: string;
  let app: TestApp;
  const lines: string[] = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-usage-lock-'));
    app = await startTestApp({
      clock: new ManualClock(START),
      env: {
        DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}`,
        STORAGE_TIMEOUT_MS: String(TIMEOUT_MS),
        // Only the flushes the test makes.
        USAGE_FLUSH_MS: '600000',
      },
      logger: createLogger('warn', { write: (line: string) => void lines.push(line) }),
    });
  });

  after(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('are failed from the first, warn, and store every count once the lock is gone', async () => {
    const { key, account } = await app.newKey();
    const accountId = (await app.services.accounts.findAccount(account))?.id as number;
    const path = app.services.config.databaseUrl.slice('sqlite:'.length);
    const locker = await holdWriteLock(path, LOCK_HELD_MS);
    const exited = once(locker, 'exit');
    try {
      assert.equal((await request(app, '/v1/pets', { key })).status, 200);
      const results = [];
      for (let i = 0; i < 4; i += 1) results.push(await app.services.usageFlusher.flush());
      assert.deepEqual(results, ['failed', 'failed', 'failed', 'failed']);
    } finally {
      await exited;
    }
    assert.deepEqual(await flushes(), { failed: 4 });
    const warnings = lines.filter((line) => line.includes('usage counts could not be stored'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /SQLite/);

    assert.equal(await app.services.usageFlusher.flush(), 'written');
    const range = app.services.usage.parseRange({});
    const stored = await app.services.store.usage.series({ accountId, ...range, bucketMs: 3_600_000 });
    assert.deepEqual(
      stored.map((bucket) => [bucket.operation, bucket.outcome, bucket.count]),
      [['listPets', '2xx', 1]],
    );
  });

  async function flushes(): Promise<Record<string, number>> {
    const { values } = await app.services.metrics.usageFlushes.get();
    return Object.fromEntries(values.map((sample) => [sample.labels.result as string, sample.value]));
  }
});
