import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StorageUnavailableError } from '../../src/errors.ts';
import { DEFAULT_TALLY_ENTRIES, UsageTally, type TalliedRequest } from '../../src/usage/usage-tally.ts';
import type { PendingCount } from '../../src/usage/usage-tally.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The tally is indexed by account: what concerns one account (its usage views) reads that account's
 * counts only, however many the other accounts hold, up to the tally's bound of 100,000 entries.
 */
const START = Date.parse('2026-06-01T12:00:30Z');
const HOUR = 3_600_000;
/** Far before any range the tests read, and older than the retention: other accounts' counts. */
const LONG_AGO = START - 200 * 24 * HOUR;

const counted = (accountId: number, keyId: string, at: number): TalliedRequest => ({
  accountId,
  accountName: `account-${accountId}`,
  keyId,
  operation: 'listPets',
  outcome: '2xx',
  at,
});

describe('UsageTally', () => {
  it('counts past its bound only in the entries it holds, and gives one account its own counts', () => {
    const tally = new UsageTally({ maxEntries: 3 });
    assert.equal(tally.count(counted(1, 'a', START)), true);
    assert.equal(tally.count(counted(2, 'b', START)), true);
    assert.equal(tally.count(counted(2, 'b', START + HOUR)), true);
    assert.equal(tally.count(counted(3, 'c', START)), false, 'a new combination past the bound');
    assert.equal(tally.count(counted(2, 'b', START + 5)), true, 'an entry held keeps counting');
    assert.equal(tally.size, 3);
    assert.deepEqual(
      [...tally.of(2)].map((count) => [count.hour, count.count, count.lastAt]),
      [
        [START - 30_000, 2, START + 5],
        [START - 30_000 + HOUR, 1, START + HOUR],
      ],
    );
    assert.deepEqual([...tally.of(3)], []);
  });

  it('puts back a drained flush merged with what came in meanwhile, past the bound if it must', () => {
    const tally = new UsageTally({ maxEntries: 2 });
    tally.count(counted(1, 'a', START));
    tally.count(counted(2, 'b', START));
    const drained = tally.drain();
    assert.equal(tally.size, 0);
    assert.equal(drained.size, 2);
    tally.count(counted(1, 'a', START + 10));
    tally.count(counted(3, 'c', START));
    tally.restore(drained);
    assert.equal(tally.size, 3);
    const all = [...tally.all()].map((count) => [count.accountId, count.count, count.lastAt]);
    assert.deepEqual(
      all.sort((a, b) => (a[0] as number) - (b[0] as number)),
      [
        [1, 2, START + 10],
        [2, 1, START],
        [3, 1, START],
      ],
    );
  });
});

describeEachBackend('a full usage tally', (backend) => {
  let app: TestApp;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock(START);
    // Below what PostgreSQL takes for the whole tally in one transaction (2.4 s), far above one write's 0.3 s.
    app = await startTestApp({ backend, clock, env: { STORAGE_TIMEOUT_MS: '1200' } });
  });
  after(() => app.close());

  /** Other accounts' counts until the tally refuses a new one: it holds its bound. */
  function fill(): number {
    let added = 0;
    for (let i = 0; i <= DEFAULT_TALLY_ENTRIES; i += 1) {
      const accountId = 1_000_000 + (i % 1000);
      if (!app.services.tally.count(counted(accountId, `other-${i}`, LONG_AGO))) return added;
      added += 1;
    }
    assert.fail('the tally took more than its bound');
  }

  it("answers an account's views from its own counts, the other accounts' left where they are", async () => {
    const { key, account } = await app.newKey({ plan: 'pro' });
    const accountId = (await app.services.accounts.findAccount(account))?.id as number;
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app, '/v1/pets/999999', { key })).status, 404);
    assert.equal((await request(app, '/v1/usage', { key })).status, 200);
    const added = fill();
    assert.ok(added > DEFAULT_TALLY_ENTRIES - 10, `only ${added} entries were added`);
    const uncountedBefore = await uncounted();

    // Counting goes on in the entries the account holds; a new combination is left out, and says so.
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app, '/v1/pets', { method: 'POST', key, json: { name: '' } })).status, 400);
    assert.equal((await uncounted()) - uncountedBefore, 1);

    const history = await request(app, '/v1/usage/history', { key });
    assert.equal(history.status, 200, history.text);
    const points = history.json<{ points: { operation: string; outcome: string; count: number }[] }>().points;
    assert.deepEqual(
      points.map((point) => [point.operation, point.outcome, point.count]),
      [
        ['getPet', '4xx', 1],
        ['listPets', '2xx', 2],
        ['usage', '2xx', 1],
      ],
    );
    const usage = await request(app, '/v1/usage', { key });
    assert.equal(usage.status, 200, usage.text);

    // What a view of the account reads: its own entries, not the 100,000 of the tally.
    const visited: PendingCount[] = [];
    app.services.usageFlusher.visitPending(accountId, (count) => visited.push(count));
    assert.deepEqual(visited.map((count) => `${count.operation}/${count.outcome}`).sort(), [
      'getPet/4xx',
      'listPets/2xx',
      'usage/2xx',
    ]);

    // A flush stores the whole tally, the other accounts' counts with it, each once.
    assert.equal(await app.services.usageFlusher.flush('waiting'), 'written');
    const stored = await request(app, '/v1/usage/history', { key });
    assert.deepEqual(
      stored
        .json<{ points: { operation: string; outcome: string; count: number }[] }>()
        .points.map((point) => [point.operation, point.outcome, point.count]),
      [
        ['getPet', '4xx', 1],
        ['listPets', '2xx', 2],
        ['usage', '2xx', 3],
      ],
    );
    const others = await app.services.store.usage.series({
      accountId: 1_000_000,
      from: LONG_AGO - HOUR,
      to: LONG_AGO + HOUR,
      bucketMs: HOUR,
    });
    assert.equal(
      others.reduce((sum, bucket) => sum + bucket.count, 0),
      Math.ceil(added / 1000),
    );
  });

  it('stores a large tally in several writes, and puts back only what a failed write did not store', async () => {
    const accountId = 2_000_000;
    const entries = 25_000;
    assert.equal(await app.services.usageFlusher.flush('waiting'), 'written');
    for (let i = 0; i < entries; i += 1) assert.ok(app.services.tally.count(counted(accountId, `bulk-${i}`, LONG_AGO)));
    // Failing the second write: counting calls around the store's method, which is not what is under test.
    const usage = app.services.store.usage;
    const add = usage.add.bind(usage);
    const written: number[] = [];
    usage.add = async (counts, mode) => {
      if (written.length === 1) {
        written.push(0);
        throw new StorageUnavailableError('storage is unavailable: it did not answer in time; retry later');
      }
      const result = await add(counts, mode);
      written.push(counts.length);
      return result;
    };
    try {
      assert.equal(await app.services.usageFlusher.flush('waiting'), 'failed');
    } finally {
      usage.add = add;
    }
    assert.equal(written[0], 10_000);
    assert.equal(await storedFor(accountId), 10_000);
    let pending = 0;
    app.services.usageFlusher.visitPending(accountId, (count) => (pending += count.count));
    assert.equal(pending, entries - 10_000);

    assert.equal(await app.services.usageFlusher.flush('waiting'), 'written');
    assert.equal(await storedFor(accountId), entries, 'every count stored once');
  });

  async function storedFor(accountId: number): Promise<number> {
    const buckets = await app.services.store.usage.series({
      accountId,
      from: LONG_AGO - HOUR,
      to: LONG_AGO + HOUR,
      bucketMs: HOUR,
    });
    return buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  }

  async function uncounted(): Promise<number> {
    const { values } = await app.services.metrics.usageUncounted.get();
    return values.reduce((sum, sample) => sum + sample.value, 0);
  }
});
