import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresBackend, type Backend } from '../support/backends.ts';
import { request } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { systemClock } from '../../src/clock.ts';

/**
 * Three instances on one PostgreSQL, each with its own tally, flushing every 50 ms while requests
 * arrive: the history they build together holds exactly the requests they answered.
 */
const postgres: Backend = await postgresBackend();
const HOUR = 3_600_000;

describe('the usage history of three instances on PostgreSQL', { skip: postgres.skip }, () => {
  let instances: TestApp[] = [];

  before(async () => {
    const env = { DATABASE_URL: postgres.databaseUrl, USAGE_FLUSH_MS: '50', PG_POOL_SIZE: '4' };
    instances = [];
    // One at a time: each migrates the shared schema on start (the first one applies the migrations).
    for (let i = 0; i < 3; i += 1) instances.push(await startTestApp({ env, clock: systemClock }));
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.close().catch(() => undefined)));
    await postgres.cleanup();
  });

  test('adds up exactly, however the flushes of the instances interleave', async () => {
    const first = instances[0] as TestApp;
    const keys = await Promise.all([1, 2, 3, 4].map(() => first.newKey({ plan: 'business' })));
    const paths = ['/v1/pets?limit=1', '/v1/pets/1', '/v1/pets/999999999', '/v1/usage'];
    const answered = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 600 }, async (_, index) => {
        const { key, keyId } = keys[index % keys.length] as (typeof keys)[number];
        const instance = instances[index % 3] as TestApp;
        const path = paths[index % paths.length] as string;
        const { status } = await request(instance, path, { key });
        const name = `${keyId} ${path} ${status}`;
        answered.set(name, (answered.get(name) ?? 0) + 1);
      }),
    );
    // Closing flushes what each instance still holds, waiting for storage.
    for (const instance of instances.splice(1)) await instance.close();
    await first.services.usageFlusher.flush('waiting');
    const now = Date.now();
    const stored = await first.services.store.usage.series({
      accountId: undefined,
      from: Math.floor(now / HOUR) * HOUR - HOUR,
      to: now + HOUR,
      bucketMs: HOUR,
    });
    const storedTotal = stored.reduce((sum, bucket) => sum + bucket.count, 0);
    assert.equal(storedTotal, 600);
    for (const { keyId } of keys) {
      const account = (await first.services.store.keys.findById(keyId))?.accountId as number;
      const own = await first.services.store.usage.series({
        accountId: account,
        from: Math.floor(now / HOUR) * HOUR - HOUR,
        to: now + HOUR,
        bucketMs: HOUR,
      });
      assert.equal(
        own.reduce((sum, bucket) => sum + bucket.count, 0),
        150,
      );
    }
    const getPet = await first.services.usage.deprecatedCallers();
    const answeredGetPet = [...answered].filter(([name]) => / \/v1\/pets\/\d+ /.test(name));
    assert.equal(
      getPet.callers.reduce((sum, caller) => sum + caller.calls, 0),
      answeredGetPet.reduce((sum, [, count]) => sum + count, 0),
    );
    const flushes = (await first.services.metrics.usageFlushes.get()).values;
    const written = flushes.find((value) => value.labels.result === 'written')?.value ?? 0;
    assert.ok(written > 1, `the first instance flushed ${written} times while requests arrived`);
  });
});
