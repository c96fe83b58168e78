import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/composition-root.ts';
import { USAGE_OUTCOMES, type UsageOutcome } from '../../src/domain/usage.ts';
import type { UsagePoint } from '../../src/usage/usage-service.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The usage history through the real app: what the tally counts per request, what a flush stores,
 * and that a flush storage refuses keeps every count for the next one.
 */
const START = Date.parse('2026-06-01T12:00:00Z');
const HOUR = 3_600_000;

function byOutcome(points: readonly UsagePoint[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const point of points) {
    const name = `${point.operation}/${point.outcome}`;
    totals[name] = (totals[name] ?? 0) + point.count;
  }
  return totals;
}

describeEachBackend('the usage tally', (backend) => {
  let app: TestApp;
  let clock: ManualClock;
  const lines: string[] = [];

  before(async () => {
    clock = new ManualClock(START);
    app = await startTestApp({
      backend,
      clock,
      env: { BAN_THRESHOLD: '2', KEY_CACHE_TTL_MS: '0' },
      logger: createLogger('warn', { write: (line: string) => void lines.push(line) }),
    });
  });

  after(() => app.close());

  /** An enterprise account of 3 requests a minute: the 4th to 6th are refused, the 7th finds the key banned. */
  async function exercisedKey(): Promise<{ key: string; keyId: string; account: string; accountId: number }> {
    const { key, keyId, account } = await app.newKey({ plan: 'enterprise', perMinute: 3, perDay: 1000 });
    assert.equal((await request(app, '/v1/pets?limit=1', { key })).status, 200);
    assert.equal((await request(app, '/v1/pets/999999999', { key })).status, 404);
    assert.equal((await request(app, '/v1/pets', { method: 'POST', key, json: { name: '' } })).status, 400);
    assert.equal((await request(app, '/v1/usage', { key })).status, 200);
    const refused = [];
    for (let i = 0; i < 3; i += 1) refused.push((await request(app, '/v1/pets', { key })).status);
    assert.deepEqual(refused, [429, 429, 429]);
    const banned = await request(app, '/v1/pets', { key });
    assert.equal(banned.status, 429);
    const accountId = (await app.services.accounts.findAccount(account))?.id as number;
    return { key, keyId, account, accountId };
  }

  const EXPECTED = {
    'listPets/2xx': 1,
    'getPet/4xx': 1,
    'createPet/4xx': 1,
    'usage/2xx': 1,
    'listPets/429': 3,
    'listPets/banned': 1,
  };

  it('counts each answered request of a key by operation and outcome, at once and after a flush', async () => {
    const { accountId } = await exercisedKey();
    const range = app.services.usage.parseRange({ from: new Date(START - HOUR).toISOString() });
    // Before any flush, from this instance's tally.
    assert.deepEqual(byOutcome(await app.services.usage.history(accountId, range)), EXPECTED);
    assert.equal(await app.services.usageFlusher.flush(), 'written');
    const stored = await app.services.store.usage.series({ accountId, from: range.from, to: range.to, bucketMs: HOUR });
    assert.deepEqual(byOutcome(stored), EXPECTED);
    // Stored and not counted twice.
    assert.deepEqual(byOutcome(await app.services.usage.history(accountId, range)), EXPECTED);
  });

  it('adds later flushes to the stored counts of the same hour', async () => {
    const { key, keyId, accountId } = await app.newKey().then(async (created) => ({
      ...created,
      accountId: (await app.services.accounts.findAccount(created.account))?.id as number,
    }));
    for (let round = 0; round < 3; round += 1) {
      await request(app, '/v1/pets/1', { key });
      await request(app, '/v1/pets/1', { key });
      await app.services.usageFlusher.flush();
    }
    const deprecated = await app.services.usage.deprecated(accountId);
    assert.equal(deprecated.calls, 6);
    assert.deepEqual(
      deprecated.keys.map((calls) => [calls.keyId, calls.calls]),
      [[keyId, 6]],
    );
    assert.equal(deprecated.lastCall, START);
    assert.equal(new Date(deprecated.sunset).toISOString(), '2030-12-05T00:00:00.000Z');
  });

  it('keeps the counts of a flush that fails, warns, and stores them exactly once when storage is back', async () => {
    const { accountId } = await exercisedKey();
    await app.execute('ALTER TABLE usage_hours RENAME TO usage_hours_away');
    try {
      assert.equal(await app.services.usageFlusher.flush(), 'failed');
      assert.equal(await app.services.usageFlusher.flush(), 'failed');
    } finally {
      await app.execute('ALTER TABLE usage_hours_away RENAME TO usage_hours');
    }
    const warnings = lines.filter((line) => line.includes('usage counts could not be stored'));
    assert.equal(warnings.length, 1, 'one warning for a failure that repeats, not one per flush');
    assert.equal(await app.services.usageFlusher.flush(), 'written');
    const range = app.services.usage.parseRange({ from: new Date(START - HOUR).toISOString() });
    const stored = await app.services.store.usage.series({ accountId, from: range.from, to: range.to, bucketMs: HOUR });
    assert.deepEqual(byOutcome(stored), EXPECTED);
  });

  it('puts requests in their UTC hour and sums hours into days', async () => {
    const { key, account } = await app.newKey();
    const accountId = (await app.services.accounts.findAccount(account))?.id as number;
    clock.set(Date.parse('2026-06-02T23:30:00Z'));
    await request(app, '/v1/pets', { key });
    clock.set(Date.parse('2026-06-03T00:10:00Z'));
    await request(app, '/v1/pets', { key });
    await request(app, '/v1/pets', { key });
    await app.services.usageFlusher.flush();
    const hourly = await app.services.usage.history(
      accountId,
      app.services.usage.parseRange({ from: '2026-06-02', to: '2026-06-04' }),
    );
    assert.deepEqual(
      hourly.map((point) => [new Date(point.at).toISOString(), point.count]),
      [
        ['2026-06-02T23:00:00.000Z', 1],
        ['2026-06-03T00:00:00.000Z', 2],
      ],
    );
    const daily = await app.services.usage.history(
      accountId,
      app.services.usage.parseRange({ from: '2026-06-01', to: '2026-06-04', granularity: 'day' }),
    );
    assert.deepEqual(
      daily.map((point) => [new Date(point.at).toISOString(), point.count]),
      [
        ['2026-06-02T00:00:00.000Z', 1],
        ['2026-06-03T00:00:00.000Z', 2],
      ],
    );
    clock.set(START);
  });

  it('purges the hours older than USAGE_RETENTION_DAYS (90 by default) and keeps the rest', async () => {
    const { keyId, account } = await app.newKey();
    const accountId = (await app.services.accounts.findAccount(account))?.id as number;
    const now = clock.now();
    const hourOf = (daysAgo: number): number => Math.floor((now - daysAgo * 86_400_000) / HOUR) * HOUR;
    const row = (daysAgo: number) => ({
      accountId,
      keyId,
      operation: 'listPets' as const,
      outcome: '2xx' as const,
      hour: hourOf(daysAgo),
      count: 5,
      lastAt: hourOf(daysAgo) + 1,
    });
    assert.equal(await app.services.store.usage.add([row(91), row(89), row(1)], 'waiting'), true);
    assert.ok((await app.services.usageFlusher.purgeExpired()) !== false);
    const stored = await app.services.store.usage.series({
      accountId,
      from: hourOf(200),
      to: now + HOUR,
      bucketMs: HOUR,
    });
    assert.deepEqual(
      stored.map((bucket) => bucket.at).sort((a, b) => a - b),
      [hourOf(89), hourOf(1)],
    );
  });

  it('ranks accounts by requests and by refusals', async () => {
    const quiet = await app.newKey();
    await request(app, '/v1/pets', { key: quiet.key });
    const noisy = await exercisedKey();
    const range = { from: START - HOUR, to: START + HOUR };
    const byRefusals = await app.services.usage.top('refusals', range, 100);
    assert.ok(!byRefusals.some((totals) => totals.account === quiet.account), 'no refusals, not listed');
    assert.deepEqual(
      byRefusals.find((totals) => totals.account === noisy.account),
      { account: noisy.account, requests: 8, refusals: 4 },
    );
    const byRequests = await app.services.usage.top('requests', range, 1000);
    assert.equal(byRequests.find((totals) => totals.account === quiet.account)?.requests, 1);
  });
});

describe('history ranges', () => {
  const app = appForSuite({ clock: new ManualClock(START) });

  const invalid: [string, Record<string, string>, RegExp][] = [
    ['an unparsable from', { from: 'yesterday' }, /^from must be an ISO 8601 date/],
    ['a date-time without offset', { to: '2026-06-01T10:00:00' }, /^to must be an ISO 8601 date/],
    ['from after to', { from: '2026-06-01', to: '2026-05-01' }, /^from must be before to/],
    ['more than 90 days', { from: '2026-01-01', to: '2026-06-01' }, /spans more than 90 days/],
    ['a day that does not exist', { from: '2026-02-30' }, /^from is not a date that exists: February 2026 has/],
    ['an hour that does not exist', { to: '2026-06-01T24:00Z' }, /^to is not a time that exists: hours run/],
    [
      '90 days that widen to more',
      { from: '2026-03-03T00:30:00Z', to: '2026-06-01T00:30:00Z' },
      /spans more than 90 days once widened to whole hours/,
    ],
    ['an unknown granularity', { granularity: 'week' }, /^granularity must be hour or day/],
  ];
  for (const [name, raw, message] of invalid) {
    it(`refuses ${name} with invalid_query`, () => {
      assert.throws(
        () => app.services.usage.parseRange(raw),
        (error: Error & { code?: string }) => error.code === 'invalid_query' && message.test(error.message),
      );
    });
  }

  it('defaults to the last 24 hours by the hour, through the current one, aligned to whole buckets', () => {
    const range = app.services.usage.parseRange({});
    assert.deepEqual(range, { from: START - 23 * HOUR, to: START + HOUR, granularity: 'hour' });
    const days = app.services.usage.parseRange({ granularity: 'day', to: '2026-06-01T12:30:00Z' });
    assert.equal(new Date(days.from).toISOString(), '2026-05-02T00:00:00.000Z');
    assert.equal(new Date(days.to).toISOString(), '2026-06-02T00:00:00.000Z');
    assert.equal(app.services.usage.parseRange({ from: '2026-03-03', to: '2026-06-01' }).to, START - 12 * HOUR);
  });

  it('counts only outcomes it knows', () => {
    const outcomes: readonly UsageOutcome[] = USAGE_OUTCOMES;
    assert.deepEqual(outcomes, ['2xx', '4xx', '429', 'banned', '5xx']);
  });
});
