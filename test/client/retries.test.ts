import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PetstoreClient, PetstoreError, type Pet, type WaitInfo } from '@petstore/client';
import { BACKOFF_BASE_MS } from '../../client/src/retry-policy.ts';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, manualTime, recordingFetch, recordingSleep, rejection, startFlakyFront } from './client-fixtures.ts';
import type { FlakyFront, FrontAction, RecordingSleep } from './client-fixtures.ts';

/**
 * Retries against the real app: a 429 rate_limited is waited out (the injected sleep moves the app's
 * clock), 503s and dropped connections are backed off, and creations keep one Idempotency-Key.
 */

const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));

async function petsNamed(client: PetstoreClient, name: string): Promise<Pet[]> {
  const found: Pet[] = [];
  for await (const pet of client.pets.list({ limit: 100 })) if (pet.name === name) found.push(pet);
  return found;
}

describe('client: retries', () => {
  const app = appForSuite({ clock });

  /** Runs `work` with a client of a fresh pro key behind a front that fails as `plan` says, then closes the front. */
  async function throughFront(
    plan: readonly FrontAction[],
    maxRetries: number,
    work: (parts: { front: FlakyFront; waits: RecordingSleep; client: PetstoreClient }) => Promise<void>,
  ): Promise<void> {
    const { key } = await app.newKey({ plan: 'pro' });
    const front = await startFlakyFront(app.url, plan);
    const waits = recordingSleep();
    const client = new PetstoreClient({ baseUrl: front.baseUrl, apiKey: key, maxRetries, sleep: waits.sleep });
    try {
      await work({ front, waits, client });
    } finally {
      await front.close();
    }
  }

  it('waits out a 429 rate_limited for its Retry-After, with one Idempotency-Key, creating one pet', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const recorder = recordingFetch();
    const time = manualTime(clock);
    const events: Array<[string, WaitInfo]> = [];
    const client = clientOf(app, key, {
      fetch: recorder.fetch,
      sleep: time.sleep,
      now: time.now,
      onRetry: (info) => events.push(['retry', info]),
      onRateLimit: (info) => events.push(['rate limit', info]),
    });
    clock.set(new Date('2026-06-01T12:10:00Z'));
    // Another program spends the account's minute: nothing this client has seen tells it so.
    for (let i = 0; i < 2; i += 1) assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    const pet = await client.pets.create({ name: 'waited', categoryId: 1 });
    assert.deepEqual(time.delays, [60_000], 'the minute window resets 60 s later');
    assert.deepEqual(recorder.statuses, [429, 201], 'refused once, then created');
    const keys = recorder.requests.map((attempt) => attempt.headers.get('idempotency-key'));
    assert.match(keys[0] ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(keys[1], keys[0], 'the same key on the retry');
    assert.deepEqual(await petsNamed(client, 'waited'), [pet]);
    const info = {
      reason: 'rate_limited',
      attempt: 2,
      delayMs: 60_000,
      requestId: recorder.requestIds[0],
      status: 429,
      code: 'rate_limited',
    };
    assert.deepEqual(events, [
      ['rate limit', info],
      ['retry', info],
    ]);
  });

  it('throws at once when Retry-After is longer than maxRetryDelayMs', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const recorder = recordingFetch();
    const waits = recordingSleep();
    const client = clientOf(app, key, { fetch: recorder.fetch, sleep: waits.sleep, maxRetryDelayMs: 1000 });
    clock.set(new Date('2026-06-01T12:20:00Z'));
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    const error = await rejection(client.pets.listPage(), 'the second request of the minute passed');
    assert.ok(error instanceof PetstoreError);
    assert.deepEqual([error.status, error.code, error.retryAfter], [429, 'rate_limited', 60]);
    assert.deepEqual(waits.delays, [], 'no wait');
    assert.equal(recorder.requests.length, 1, 'no retry');
  });

  it('retries a 503 with exponential backoff and full jitter', async () => {
    await throughFront(['unavailable', 'unavailable'], 3, async ({ front, waits, client }) => {
      const page = await client.pets.listPage();
      assert.ok(Array.isArray(page.pets));
      assert.deepEqual(
        front.seen.map((seen) => seen.action),
        ['unavailable', 'unavailable', 'forward'],
      );
      assert.equal(waits.delays.length, 2);
      waits.delays.forEach((delay, retry) => {
        assert.ok(delay >= 0 && delay < BACKOFF_BASE_MS * 2 ** retry, `retry ${retry} waited ${delay} ms`);
      });
    });
  });

  it('gives up after maxRetries 503s with the last PetstoreError', async () => {
    await throughFront(['unavailable', 'unavailable', 'unavailable'], 1, async ({ front, waits, client }) => {
      const error = await rejection(client.pets.listPage(), 'passed');
      assert.ok(error instanceof PetstoreError);
      assert.deepEqual([error.status, error.code], [503, 'service_unavailable']);
      assert.equal(front.seen.length, 2, 'the first attempt and one retry');
      assert.equal(waits.delays.length, 1);
    });
  });

  it('retries a creation whose answer was lost with the same key: one pet, the first one replayed', async () => {
    await throughFront(['drop-before', 'drop-after'], 3, async ({ front, waits, client }) => {
      const pet = await client.pets.create({ name: 'lost answer', categoryId: 9007199254740993n, status: 'sold' });
      assert.deepEqual(
        front.seen.map((seen) => [seen.action, seen.upstreamStatus, seen.replayed]),
        [
          ['drop-before', undefined, undefined],
          ['drop-after', 201, false],
          ['forward', 201, true],
        ],
      );
      const keys = new Set(front.seen.map((seen) => seen.idempotencyKey));
      assert.equal(keys.size, 1, 'one Idempotency-Key for every attempt');
      assert.equal(waits.delays.length, 2);
      assert.deepEqual(await petsNamed(client, 'lost answer'), [pet]);
      assert.equal(pet.categoryId, 9007199254740993n);
    });
  });

  it('rethrows the network error itself once the retries are spent', async () => {
    await throughFront(['drop-before', 'drop-before', 'drop-before'], 2, async ({ front, waits, client }) => {
      const error = await rejection(client.pets.listPage(), 'passed');
      assert.ok(error instanceof TypeError && !(error instanceof PetstoreError), `fetch's own error: ${String(error)}`);
      assert.equal(front.seen.length, 3);
      assert.equal(waits.delays.length, 2);
    });
  });
});
