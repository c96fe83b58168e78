import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  LEAP_DAY,
  NONEXISTENT_INSTANTS,
  PAST_90_DAYS_ONCE_WIDENED,
  WIDENED_TO_90_DAYS,
} from '../support/usage-ranges.ts';
import { DAY_MS, MID, rateLimitOf } from '../ratelimit/rate-limit-assertions.ts';

/**
 * GET /v1/usage/history through the real app: the caller's own account, all its keys, per hour or
 * day, by operation and outcome; never another account's requests; ranges checked; read without
 * spending the account's quota, under GET /v1/usage's small limit. The counts of this instance are
 * read before they are flushed, so no test waits. `request()` checks every answer against the
 * served document.
 */

const USAGE_PER_MINUTE = 10;
const HOUR_MS = 3_600_000;
/** The UTC hour of MID (2026-06-01T12:00:30Z). */
const HOUR = Date.UTC(2026, 5, 1, 12);

interface Point {
  readonly at: string;
  readonly operation: string;
  readonly outcome: string;
  readonly count: number;
}

interface History {
  readonly from: string;
  readonly to: string;
  readonly granularity: 'hour' | 'day';
  readonly points: readonly Point[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

function historyOf(answer: HttpAnswer): History {
  assert.equal(answer.status, 200, answer.text);
  return answer.json<History>();
}

function point(at: number, operation: string, outcome: string, count: number): Point {
  return { at: iso(at), operation, outcome, count };
}

async function ok(app: TestApp, path: string, key: string, init: { method?: string; json?: unknown } = {}) {
  const answer = await request(app, path, { key, ...init });
  assert.ok(answer.status < 300, `${path}: ${answer.status} ${answer.text}`);
  return answer;
}

/** Another key of the same account. */
async function secondKey(app: TestApp, account: string): Promise<{ key: string; keyId: string }> {
  const created = await app.services.accounts.createKey(account);
  return { key: created.key, keyId: created.record.id };
}

describeEachBackend('GET /v1/usage/history', (backend) => {
  const clock = new ManualClock(MID);
  const app = appForSuite({ backend, clock, env: { USAGE_PER_MINUTE: String(USAGE_PER_MINUTE) } });

  it("counts the account's requests of all its keys per hour and per day, and never another account's", async () => {
    clock.set(MID);
    const { key, account } = await app.newKey({ plan: 'pro' });
    const other = await secondKey(app, account);
    const stranger = await app.newKey({ plan: 'pro' });

    const created = (await ok(app, '/v1/pets', key, { method: 'POST', json: { name: 'Rex', categoryId: 3 } })).json<{
      id: number;
    }>();
    for (let i = 0; i < 3; i += 1) await ok(app, '/v1/pets', key);
    assertError(await request(app, '/v1/pets?limit=0', { key }), 400, 'invalid_query');
    for (let i = 0; i < 2; i += 1) await ok(app, `/v1/pets/${created.id}`, other.key);
    for (let i = 0; i < 4; i += 1) await ok(app, `/v1/pets/${created.id}`, stranger.key);
    await ok(app, '/v1/pets', stranger.key);
    clock.set(MID + HOUR_MS);
    await ok(app, '/v1/pets', other.key);

    const hourly = historyOf(
      await request(app, '/v1/usage/history?from=2026-06-01T12:00:00Z&to=2026-06-01T14:00:00Z', { key }),
    );
    assert.deepEqual(hourly, {
      from: iso(HOUR),
      to: iso(HOUR + 2 * HOUR_MS),
      granularity: 'hour',
      points: [
        point(HOUR, 'createPet', '2xx', 1),
        point(HOUR, 'getPet', '2xx', 2),
        point(HOUR, 'listPets', '2xx', 3),
        point(HOUR, 'listPets', '4xx', 1),
        point(HOUR + HOUR_MS, 'listPets', '2xx', 1),
      ],
    });

    // A day bucket sums its hours; the history request above is counted too, as `usage`.
    const daily = historyOf(
      await request(app, '/v1/usage/history?granularity=day&from=2026-06-01&to=2026-06-02', { key: other.key }),
    );
    const day = Date.UTC(2026, 5, 1);
    assert.deepEqual(daily, {
      from: iso(day),
      to: iso(day + DAY_MS),
      granularity: 'day',
      points: [
        point(day, 'createPet', '2xx', 1),
        point(day, 'getPet', '2xx', 2),
        point(day, 'listPets', '2xx', 4),
        point(day, 'listPets', '4xx', 1),
        point(day, 'usage', '2xx', 1),
      ],
    });

    const theirs = historyOf(
      await request(app, '/v1/usage/history?granularity=day&from=2026-06-01', { key: stranger.key }),
    );
    assert.deepEqual(theirs.points, [point(day, 'getPet', '2xx', 4), point(day, 'listPets', '2xx', 1)]);
  });

  it('rounds the range out to whole buckets; by default, 24 hours or 30 days through the current one', async () => {
    clock.set(MID);
    const { key } = await app.newKey();
    const rounded = historyOf(
      await request(app, '/v1/usage/history?from=2026-06-01T10:20:00Z&to=2026-06-01T11:00:01Z', { key }),
    );
    assert.deepEqual([rounded.from, rounded.to], [iso(HOUR - 2 * HOUR_MS), iso(HOUR)]);
    const hourly = historyOf(await request(app, '/v1/usage/history', { key }));
    assert.deepEqual(
      [hourly.from, hourly.to, hourly.granularity],
      [iso(HOUR - 23 * HOUR_MS), iso(HOUR + HOUR_MS), 'hour'],
    );
    const daily = historyOf(await request(app, '/v1/usage/history?granularity=day', { key }));
    const day = Date.UTC(2026, 5, 1);
    assert.deepEqual([daily.from, daily.to, daily.granularity], [iso(day - 29 * DAY_MS), iso(day + DAY_MS), 'day']);
  });

  it('refuses a bad range or an unknown parameter with 400 invalid_query naming the parameter', async () => {
    clock.set(MID);
    const { key } = await app.newKey();
    const refused = async (query: string, ...mentions: string[]): Promise<void> => {
      assertError(await request(app, `/v1/usage/history?${query}`, { key }), 400, 'invalid_query', ...mentions);
    };
    await refused('from=yesterday', 'from must be an ISO 8601 date or date-time', '"yesterday"');
    await refused('to=2026-6-1', 'to must be an ISO 8601 date');
    await refused('from=2026-06-01T12:00:00', 'from must be', 'with its offset');
    await refused('from=2026-06-01T12:00:00Z&to=2026-06-01T12:00:00Z', 'from must be before to');
    await refused('from=2026-06-02&to=2026-06-01', 'from must be before to');
    await refused('from=2026-03-01&to=2026-06-01', 'more than 90 days');
    await refused('granularity=week', "'granularity'", 'hour, day');
    await refused('from=2026-05-01&from=2026-05-02', "'from'", 'repeated');
    await refused('view=all', "unknown query parameter 'view'", 'takes from, to, granularity');
    // Exactly 90 days, 2,160 hourly buckets, is allowed.
    const longest = historyOf(
      await request(app, '/v1/usage/history?from=2026-03-03T00:00:00Z&to=2026-06-01T00:00:00Z', { key }),
    );
    assert.equal(Date.parse(longest.to) - Date.parse(longest.from), 90 * DAY_MS);
  });

  it('refuses a date or time that does not exist, naming the parameter and why; a leap day exists', async () => {
    clock.set(MID);
    const { key } = await app.newKey();
    for (const [query, ...mentions] of NONEXISTENT_INSTANTS)
      assertError(await request(app, `/v1/usage/history?${query}`, { key }), 400, 'invalid_query', ...mentions);
    assert.equal(historyOf(await request(app, `/v1/usage/history?${LEAP_DAY.query}`, { key })).from, LEAP_DAY.from);
  });

  it('holds the range answered, widened to whole buckets, to 90 days', async () => {
    clock.set(MID);
    const { key } = await app.newKey();
    for (const [query, ...mentions] of PAST_90_DAYS_ONCE_WIDENED)
      assertError(await request(app, `/v1/usage/history?${query}`, { key }), 400, 'invalid_query', ...mentions);
    const longest = historyOf(await request(app, `/v1/usage/history?${WIDENED_TO_90_DAYS.query}`, { key }));
    assert.deepEqual([longest.from, longest.to], [WIDENED_TO_90_DAYS.from, WIDENED_TO_90_DAYS.to]);
  });

  it("spends none of the account's quota and shares GET /v1/usage's small limit", async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'pro' });
    const pets = async (): Promise<number> => rateLimitOf(await ok(app, '/v1/pets', key)).remaining;
    assert.equal(await pets(), 299);
    for (let i = 0; i < USAGE_PER_MINUTE / 2; i += 1) {
      const answer = await request(app, '/v1/usage/history', { key });
      historyOf(answer);
      assert.equal(rateLimitOf(answer).remaining, 299, 'the headers a pets request would carry, without its spending');
      await ok(app, '/v1/usage', key);
    }
    assert.equal(await pets(), 298, 'the history calls in between counted nothing');
    const limited = await request(app, '/v1/usage/history', { key });
    assertError(limited, 429, 'rate_limited', `${USAGE_PER_MINUTE} per minute`);
    assertError(await request(app, '/v1/usage', { key }), 429, 'rate_limited');
    assert.equal(await pets(), 297, "the account's windows were not touched");
  });

  it("shows another instance's counts once it has stored them, and this instance's at once, each once", async () => {
    // Two instances on one database, flushing only when told.
    const env = { USAGE_PER_MINUTE: String(USAGE_PER_MINUTE), USAGE_FLUSH_MS: '600000' };
    const first = await startTestApp({ backend, clock, env });
    const second = await startTestApp({
      backend,
      clock,
      env: { ...env, DATABASE_URL: first.services.config.databaseUrl },
    });
    try {
      clock.set(MID);
      const { key } = await first.newKey();
      const hourOf = async (on: TestApp): Promise<readonly Point[]> =>
        historyOf(await request(on, '/v1/usage/history?from=2026-06-01T12:00Z&to=2026-06-01T13:00Z', { key })).points;
      for (let i = 0; i < 2; i += 1) await ok(first, '/v1/pets', key);
      await first.services.usageFlusher.flush();
      await ok(first, '/v1/pets', key);
      assert.deepEqual(await hourOf(first), [point(HOUR, 'listPets', '2xx', 3)], 'stored and not yet stored, once');
      assert.deepEqual(
        await hourOf(second),
        [point(HOUR, 'listPets', '2xx', 2)],
        'what the first instance has stored, not yet its later requests',
      );
      await first.services.usageFlusher.flush();
      assert.deepEqual(
        await hourOf(second),
        [point(HOUR, 'listPets', '2xx', 3), point(HOUR, 'usage', '2xx', 2)],
        "all of the first instance's, and the second's own history request, not stored yet",
      );
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('refuses a missing key with 401, and other methods with 405', async () => {
    clock.set(MID);
    const missing = await request(app, '/v1/usage/history');
    assertError(missing, 401, 'unauthorized');
    const { key } = await app.newKey();
    const post = await request(app, '/v1/usage/history', { method: 'POST', key, body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(errorOf(post).code, 'method_not_allowed');
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await request(app, '/v1/usage/history', { method: 'HEAD', key });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });
});
