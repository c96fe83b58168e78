import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  CLIENT_VERSION,
  PetstoreClient,
  PetstoreError,
  PetstoreTimeoutError,
  type Fetch,
  type WaitInfo,
} from '@petstore/client';
import { request } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, manualTime, recordingFetch, recordingSleep, rejection, startFlakyFront } from './client-fixtures.ts';
import type { FlakyFront } from './client-fixtures.ts';

/**
 * Options of every call against the real app, some through a real HTTP front that fails on purpose: request ids,
 * the User-Agent, the wait callbacks, timeouts and aborts.
 */

const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));

/** Resolves once the front has seen `count` requests: a request the test leaves hanging has then arrived. */
async function seenCount(front: FlakyFront, count: number): Promise<void> {
  while (front.seen.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** What a test keeps of a wait: the fields it checks, absent ones included. */
function waitOf(info: WaitInfo): unknown[] {
  return [info.reason, info.attempt, info.requestId, info.status, info.code];
}

describe('client: call options and wait callbacks', () => {
  const app = appForSuite({ clock });
  const fronts: FlakyFront[] = [];

  after(async () => {
    for (const front of fronts) await front.close();
  });

  async function front(plan: Parameters<typeof startFlakyFront>[1]): Promise<FlakyFront> {
    const started = await startFlakyFront(app.url, plan);
    fronts.push(started);
    return started;
  }

  it('sends a call’s requestId as X-Request-Id on every attempt; the service echoes it', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const flaky = await front(['unavailable', 'drop-before']);
    const recorder = recordingFetch();
    const client = new PetstoreClient({
      baseUrl: flaky.baseUrl,
      apiKey: key,
      fetch: recorder.fetch,
      sleep: recordingSleep().sleep,
    });
    await client.pets.listPage({ requestId: 'call-7f3a' });
    assert.deepEqual(
      flaky.seen.map((seen) => [seen.action, seen.requestId]),
      [
        ['unavailable', 'call-7f3a'],
        ['drop-before', 'call-7f3a'],
        ['forward', 'call-7f3a'],
      ],
    );
    assert.equal(recorder.requestIds.at(-1), 'call-7f3a', "the service's answer echoes it");
  });

  it('gives each call an id of its own from a requestId function; a call’s own id wins', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const recorder = recordingFetch();
    let calls = 0;
    const client = clientOf(app, key, { fetch: recorder.fetch, requestId: () => `job-${(calls += 1)}` });
    await client.pets.create({ name: 'Rex', categoryId: 1 });
    await client.pets.listPage();
    await client.usage();
    await client.pets.listPage({ requestId: 'mine' });
    // Not pets.get: its first deprecated answer makes the deprecation warning read the usage, a call of its own.
    const error = await rejection(client.pets.listPage({ cursor: 'not-a-cursor' }));
    assert.ok(error instanceof PetstoreError);
    assert.equal(error.requestId, 'job-4');
    assert.deepEqual(recorder.requestIds, ['job-1', 'job-2', 'job-3', 'mine', 'job-4']);
    assert.deepEqual(
      recorder.requests.map((sent) => sent.headers.get('x-request-id')),
      recorder.requestIds,
    );
  });

  it('sends no X-Request-Id unless told, and the service makes one', async () => {
    const { key } = await app.newKey();
    const recorder = recordingFetch();
    const client = clientOf(app, key, { fetch: recorder.fetch });
    await client.pets.listPage();
    assert.equal(recorder.requests[0]?.headers.get('x-request-id'), null);
    assert.ok(recorder.requestIds[0]);
  });

  it('sends User-Agent petstore-client/<version>, with the client’s or the call’s suffix', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const flaky = await front([]);
    const plain = new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key });
    const named = new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key, userAgent: 'inventory-sync/2.0' });
    await plain.pets.listPage();
    await named.pets.listPage();
    await named.pets.listPage({ userAgent: 'nightly-report/1' });
    assert.deepEqual(
      flaky.seen.map((seen) => seen.userAgent),
      [
        `petstore-client/${CLIENT_VERSION}`,
        `petstore-client/${CLIENT_VERSION} inventory-sync/2.0`,
        `petstore-client/${CLIENT_VERSION} nightly-report/1`,
      ],
    );
  });

  it('calls onRetry before every retry with its reason, and onRateLimit only for the rate limit', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const flaky = await front(['unavailable', 'drop-before']);
    const waits = recordingSleep();
    const retries: WaitInfo[] = [];
    const rateLimits: WaitInfo[] = [];
    const client = new PetstoreClient({
      baseUrl: flaky.baseUrl,
      apiKey: key,
      sleep: waits.sleep,
      requestId: () => 'retried-call',
      onRetry: (info) => retries.push(info),
      onRateLimit: (info) => rateLimits.push(info),
    });
    await client.pets.create({ name: 'Rex', categoryId: 1 });
    assert.deepEqual(retries.map(waitOf), [
      ['service_unavailable', 2, 'retried-call', 503, 'service_unavailable'],
      ['network_error', 3, 'retried-call', undefined, undefined],
    ]);
    assert.deepEqual(
      retries.map((info) => info.delayMs),
      waits.delays,
      'told the delay the client then waits',
    );
    assert.deepEqual(rateLimits, []);
  });

  it('goes on as if nothing happened when a callback throws or rejects', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const flaky = await front(['unavailable']);
    const time = manualTime(clock);
    const recorder = recordingFetch();
    const told: string[] = [];
    const client = new PetstoreClient({
      baseUrl: flaky.baseUrl,
      apiKey: key,
      fetch: recorder.fetch,
      sleep: time.sleep,
      now: time.now,
      onRetry: (info) => {
        told.push(info.reason);
        throw new Error('a logger that fails');
      },
      onRateLimit: async (info) => {
        told.push(info.reason);
        throw new Error('a logger that fails later');
      },
    });
    for (let i = 0; i < 5; i += 1) await client.pets.create({ name: `logged-${i}`, categoryId: i });
    assert.deepEqual(told, ['service_unavailable', 'paced', 'paced']);
    assert.deepEqual(recorder.statuses, [503, 201, 201, 201, 201, 201], 'every pet created, none refused');
  });

  it('rejects with a PetstoreTimeoutError when the call outlasts timeoutMs; a call’s own timeoutMs wins', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const flaky = await front(['hang', 'hang']);
    const client = new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key, timeoutMs: 150 });
    const error = await rejection(client.pets.listPage({ limit: 5, requestId: 'slow-1' }));
    assert.ok(error instanceof PetstoreTimeoutError, `a PetstoreTimeoutError, got ${String(error)}`);
    assert.deepEqual([error.name, error.timeoutMs, error.requestId], ['PetstoreTimeoutError', 150, 'slow-1']);
    assert.match(error.message, /^GET \/v1\/pets\?limit=5 did not complete within 150 ms/);
    const own = await rejection(client.pets.listPage({ timeoutMs: 100 }));
    assert.ok(own instanceof PetstoreTimeoutError);
    assert.equal(own.timeoutMs, 100);
    assert.throws(() => new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key, timeoutMs: 0 }), TypeError);
    await assert.rejects(client.pets.listPage({ timeoutMs: -1 }), TypeError);
  });

  it('throws the 429 at once when its Retry-After is longer than the time left, not the timeout', async () => {
    clock.set(new Date('2026-06-01T12:30:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    assert.equal((await request(app, '/v1/pets', { key })).status, 200, 'another program spends the minute');
    const recorder = recordingFetch();
    const retries: WaitInfo[] = [];
    // The real timer sleep: waiting out the 60 s Retry-After could only end in the timeout.
    const client = clientOf(app, key, { fetch: recorder.fetch, onRetry: (info) => retries.push(info) });
    const error = await rejection(client.pets.create({ name: 'late', categoryId: 1 }, { timeoutMs: 10_000 }));
    assert.ok(error instanceof PetstoreError, `the 429 itself, got ${String(error)}`);
    assert.deepEqual([error.status, error.code, error.retryAfter], [429, 'rate_limited', 60]);
    assert.equal(error.requestId, recorder.requestIds[0]);
    assert.deepEqual(recorder.statuses, [429]);
    assert.deepEqual(retries, [], 'no wait begun');
  });

  it('counts the waits already made in the time left', async () => {
    clock.set(new Date('2026-06-01T12:40:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const spendTheMinute = async (): Promise<void> => {
      assert.equal((await request(app, '/v1/pets', { key })).status, 200, 'another program spends the minute');
    };
    await spendTheMinute();
    const recorder = recordingFetch();
    const delays: number[] = [];
    const client = clientOf(app, key, {
      fetch: recorder.fetch,
      now: () => clock.now(),
      // Time passes at once, and the other program spends the next minute before this client's retry.
      sleep: async (ms) => {
        delays.push(ms);
        clock.advance(ms);
        await spendTheMinute();
      },
    });
    const error = await rejection(client.pets.create({ name: 'twice late', categoryId: 1 }, { timeoutMs: 100_000 }));
    assert.ok(error instanceof PetstoreError, `the second 429, got ${String(error)}`);
    assert.deepEqual([error.code, error.retryAfter, error.requestId], ['rate_limited', 60, recorder.requestIds[1]]);
    assert.deepEqual(recorder.statuses, [429, 429]);
    assert.deepEqual(delays, [60_000], 'the first 60 s fit in 100 s; the next 60 s not in the 40 s left');
  });

  it('rejects with the reason of the caller’s signal, not a timeout; the client’s signal ends every call', async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    const flaky = await front(['hang']);
    const controller = new AbortController();
    const reason = new Error('the user left the page');
    const abortingFetch: Fetch = (input, init) => {
      const sent = fetch(input, init);
      controller.abort(reason);
      return sent;
    };
    const client = new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key, fetch: abortingFetch });
    const error = await rejection(client.pets.listPage({ signal: controller.signal, timeoutMs: 60_000 }));
    assert.equal(error, reason);

    const shutdown = new AbortController();
    const recorder = recordingFetch();
    const closing = clientOf(app, key, { fetch: recorder.fetch, signal: shutdown.signal });
    await closing.pets.listPage();
    shutdown.abort();
    const ended = await rejection(closing.pets.listPage());
    assert.ok(ended instanceof Error && ended.name === 'AbortError', `an AbortError, got ${String(ended)}`);
    assert.equal(recorder.requests.length, 1, 'nothing sent once the client is aborted');
  });

  it('frees an aborted call’s place in flight: a call waiting for it goes on', async () => {
    clock.set(new Date('2026-06-01T13:00:00Z'));
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 3, perDay: 100 });
    const flaky = await front(['forward', 'forward', 'hang']);
    const client = new PetstoreClient({ baseUrl: flaky.baseUrl, apiKey: key });
    await client.pets.listPage();
    await client.pets.listPage();
    assert.equal(client.rateLimit?.remaining, 1);
    const controller = new AbortController();
    const hanging = rejection(client.pets.listPage({ signal: controller.signal }));
    // The one request left is in flight: this call waits for its answer before it may be sent.
    const waiting = client.pets.listPage({ timeoutMs: 10_000 });
    await seenCount(flaky, 3);
    controller.abort();
    assert.ok(((await hanging) as Error).name === 'AbortError');
    assert.ok(Array.isArray((await waiting).pets), 'sent once the aborted call let go of its place');
    assert.equal(flaky.seen.length, 4);
  });
});
