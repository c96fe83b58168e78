import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PetstoreClient } from '@petstore/client';
import type { WaitInfo } from '@petstore/client';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import type { TestApp } from '../support/test-app.ts';
import { clientOf, manualTime, petstoreErrorOf, recordingFetch } from './client-fixtures.ts';

/**
 * Pacing against the real app on small enterprise plans: once an answer says a window is spent, the client waits
 * for its reset instead of sending a request the service would refuse (and count towards a ban). The client's
 * clock and sleep are the app's manual clock, so minutes pass at once.
 */

const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));

interface Observed {
  readonly client: PetstoreClient;
  readonly recorder: ReturnType<typeof recordingFetch>;
  readonly time: ReturnType<typeof manualTime>;
  readonly rateLimitWaits: WaitInfo[];
  readonly retries: WaitInfo[];
}

function observedClient(app: TestApp, key: string, options: { maxRetryDelayMs?: number } = {}): Observed {
  const recorder = recordingFetch();
  const time = manualTime(clock);
  const rateLimitWaits: WaitInfo[] = [];
  const retries: WaitInfo[] = [];
  const client = clientOf(app, key, {
    fetch: recorder.fetch,
    sleep: time.sleep,
    now: time.now,
    onRateLimit: (info) => rateLimitWaits.push(info),
    onRetry: (info) => retries.push(info),
    ...options,
  });
  return { client, recorder, time, rateLimitWaits, retries };
}

describe('client: pacing', () => {
  // A ban after the first request past a 429: any request the client sends into a spent window shows.
  const app = appForSuite({ clock, env: { BAN_THRESHOLD: '1', USAGE_PER_MINUTE: '2' } });

  it('creates pets as fast as it can through three spent minutes without one 429', async () => {
    clock.set(new Date('2026-06-01T12:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 5, perDay: 100 });
    const { client, recorder, time, rateLimitWaits, retries } = observedClient(app, key);
    for (let i = 0; i < 17; i += 1) await client.pets.create({ name: `fast-${i}`, categoryId: i });
    assert.deepEqual(recorder.statuses, Array(17).fill(201), 'one request per pet, none refused');
    assert.deepEqual(time.delays, [60_000, 60_000, 60_000]);
    assert.deepEqual(
      rateLimitWaits.map((info) => [info.reason, info.attempt, info.delayMs, info.status, info.code]),
      Array(3).fill(['paced', 1, 60_000, undefined, undefined]),
    );
    assert.deepEqual(retries, [], 'a paced call is not a retry');
    const usage = await client.usage();
    assert.equal(usage.key.ban, null);
    assert.equal(usage.windows.day.remaining, 83);
  });

  it('refuses a call without sending it when the wait is longer than maxRetryDelayMs', async () => {
    clock.set(new Date('2026-06-01T12:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 5, perDay: 7 });
    const { client, recorder, rateLimitWaits } = observedClient(app, key);
    for (let i = 0; i < 7; i += 1) await client.pets.create({ name: `day-${i}`, categoryId: i });
    assert.equal(rateLimitWaits.length, 1, 'one paced minute');
    const error = await petstoreErrorOf(client.pets.create({ name: 'one too many', categoryId: 8 }));
    const untilMidnight = (Date.parse('2026-06-02T00:00:00Z') - clock.now()) / 1000;
    assert.deepEqual([error.status, error.code, error.retryAfter], [429, 'rate_limited', untilMidnight]);
    assert.match(error.message, /not sent: the "day" rate-limit window is spent/);
    assert.equal(recorder.requests.length, 7, 'nothing sent');
    assert.equal(rateLimitWaits.length, 1, 'no wait');
    await petstoreErrorOf(client.pets.listPage());
    assert.equal(recorder.requests.length, 7, 'still nothing sent');
    assert.equal((await client.usage()).key.ban, null, 'usage is not paced, and the key is not banned');
  });

  it('refuses a call without sending it when the wait is longer than the time its timeoutMs leaves', async () => {
    clock.set(new Date('2026-06-01T12:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const { client, recorder, time, rateLimitWaits } = observedClient(app, key);
    await client.pets.listPage();
    await client.pets.listPage();
    const error = await petstoreErrorOf(client.pets.listPage({ timeoutMs: 30_000 }));
    assert.deepEqual([error.status, error.code, error.retryAfter], [429, 'rate_limited', 60]);
    assert.equal(
      error.message,
      'not sent: the "minute" rate-limit window is spent for 60 s more, longer than the 30000 ms left of timeoutMs ' +
        '(30000 ms)',
    );
    assert.deepEqual([recorder.requests.length, time.delays, rateLimitWaits], [2, [], []], 'nothing sent, no wait');
    await client.pets.listPage({ timeoutMs: 90_000 });
    assert.deepEqual([recorder.statuses, time.delays], [[200, 200, 200], [60_000]], 'a wait that fits is waited');
    assert.equal((await client.usage()).key.ban, null);
  });

  it('does not overshoot a small known remainder with concurrent calls', async () => {
    clock.set(new Date('2026-06-01T12:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 3, perDay: 100 });
    const { client, recorder, rateLimitWaits } = observedClient(app, key);
    await client.pets.listPage({ limit: 1 });
    const created = await Promise.all(
      Array.from({ length: 7 }, (_, i) => client.pets.create({ name: `together-${i}`, categoryId: i })),
    );
    assert.equal(new Set(created.map((pet) => pet.id)).size, 7);
    assert.deepEqual(recorder.statuses, [200, ...Array(7).fill(201)], 'one request per call, none refused');
    assert.ok(rateLimitWaits.length > 0 && rateLimitWaits.every((info) => info.reason === 'paced'));
    assert.equal((await client.usage()).key.ban, null);
  });

  it("paces by the account's state in a usage answer, and not by usage's own limit", async () => {
    clock.set(new Date('2026-06-01T12:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const { client, recorder, time, rateLimitWaits } = observedClient(app, key, { maxRetryDelayMs: 0 });
    // Another program spends the minute; the usage answer tells the client.
    for (let i = 0; i < 2; i += 1) assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    await client.usage();
    assert.equal(client.rateLimit?.remaining, 0);
    const paced = await petstoreErrorOf(client.pets.listPage());
    assert.deepEqual([paced.code, paced.retryAfter, recorder.requests.length], ['rate_limited', 60, 1]);

    clock.set(new Date('2026-06-01T12:01:00Z'));
    await client.usage();
    await client.usage();
    const refused = await petstoreErrorOf(client.usage());
    assert.deepEqual([refused.status, refused.code], [429, 'rate_limited'], "usage's own limit of 2 a minute");
    assert.equal(client.rateLimit?.remaining, 2, "the account's state, not usage's own window");
    await client.pets.listPage();
    assert.deepEqual(recorder.statuses, [200, 200, 200, 429, 200]);
    assert.deepEqual([time.delays, rateLimitWaits], [[], []]);
  });
});
