import assert from 'node:assert/strict';
import { it } from 'node:test';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp } from '../support/test-app.ts';
import {
  assertRefused,
  DAY_LEFT_SECONDS,
  describedWindowOf,
  MID,
  NEXT_MIDNIGHT_SECONDS,
  NEXT_MINUTE_SECONDS,
  rateLimitOf,
} from './rate-limit-assertions.ts';

/**
 * The rate-limit headers through the real HTTP app: X-RateLimit-Limit/-Remaining/-Reset describe
 * the window with the fewest requests left, RateLimit-Policy and RateLimit describe every window,
 * and they are on every response, errors included.
 */

describeEachBackend('rate limits over HTTP: the window the X-RateLimit headers describe', (backend) => {
  const app = appForSuite({ backend, clock: new ManualClock(MID) });

  it('describes the minute window on a free account (fewest remaining)', async () => {
    const { key } = await app.newKey({ plan: 'free' });
    const answer = await request(app, '/v1/pets', { key });
    assert.deepEqual(describedWindowOf(answer), { limit: 60, remaining: 59, reset: NEXT_MINUTE_SECONDS });
    assert.equal(rateLimitOf(answer).policy, '"minute";q=60;w=60, "day";q=1000;w=86400');
    assert.equal(rateLimitOf(answer).state, `"minute";r=59;t=30, "day";r=999;t=${DAY_LEFT_SECONDS}`);
  });

  it('describes the day window when it has fewer requests left', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 10, perDay: 6 });
    const answer = await request(app, '/v1/pets', { key });
    assert.deepEqual(describedWindowOf(answer), { limit: 6, remaining: 5, reset: NEXT_MIDNIGHT_SECONDS });
  });

  it('on a tie of remaining requests, describes the window that resets first', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 5, perDay: 5 });
    const answer = await request(app, '/v1/pets', { key });
    assert.deepEqual(describedWindowOf(answer), { limit: 5, remaining: 4, reset: NEXT_MINUTE_SECONDS });
  });
});

describeEachBackend('rate limits over HTTP: headers on every response', (backend) => {
  const clock = new ManualClock(MID);
  // Behind a trusted proxy, so each test without a key has a client address, and a window, of its own.
  const app = appForSuite({ backend, clock, env: { TRUST_PROXY: '127.0.0.1' } });

  /** A fresh business account: its first request leaves 999 of 1000 in the minute and 99,999 in the day. */
  async function businessKey(): Promise<string> {
    return (await app.newKey({ plan: 'business' })).key;
  }

  /** The first request of a fresh business account, whatever its outcome, used one request of each window. */
  function assertCountedOnce(answer: HttpAnswer, status: number): void {
    assert.equal(answer.status, status, answer.text);
    assert.deepEqual(describedWindowOf(answer), { limit: 1000, remaining: 999, reset: NEXT_MINUTE_SECONDS });
    assert.equal(rateLimitOf(answer).policy, '"minute";q=1000;w=60, "day";q=100000;w=86400');
    assert.equal(rateLimitOf(answer).state, `"minute";r=999;t=30, "day";r=99999;t=${DAY_LEFT_SECONDS}`);
  }

  const cases: Array<[title: string, path: string, options: HttpRequest, status: number, code?: string]> = [
    ['200 GET /v1/pets', '/v1/pets', {}, 200],
    ['201 POST /v1/pets', '/v1/pets', { method: 'POST', json: { name: 'Rex', categoryId: 1 } }, 201],
    [
      '400 POST /v1/pets with a bad body',
      '/v1/pets',
      { method: 'POST', json: { name: 'Rex', categoryId: 1, id: 5 } },
      400,
      'invalid_body',
    ],
    ['400 POST /v1/pets with malformed JSON', '/v1/pets', { method: 'POST', json: '{"name":' }, 400, 'invalid_json'],
    ['404 for an unknown path', '/v1/store/orders', {}, 404, 'not_found'],
    ['404 for an unknown pet', '/v1/pets/999999', {}, 404, 'not_found'],
    [
      '413 for a body over 16 KiB',
      '/v1/pets',
      { method: 'POST', json: { name: 'x'.repeat(20_000), categoryId: 1 } },
      413,
      'payload_too_large',
    ],
    [
      '415 for a body that is not JSON',
      '/v1/pets',
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'Rex' },
      415,
      'unsupported_media_type',
    ],
  ];
  for (const [title, path, options, status, code] of cases) {
    it(title, async () => {
      const answer = await request(app, path, { ...options, key: await businessKey() });
      assertCountedOnce(answer, status);
      if (code !== undefined) assert.equal(errorOf(answer).code, code);
    });
  }

  it('405 for a known path with the wrong method', async () => {
    const answer = await request(app, '/v1/pets', { key: await businessKey(), method: 'DELETE' });
    assertCountedOnce(answer, 405);
    assert.equal(errorOf(answer).code, 'method_not_allowed');
    assert.ok(answer.headers.get('allow'));
  });

  /** A 401 unauthorized, counted in the window of its client address: 60 a minute, `remaining` of them left. */
  function assertUnauthorizedInAddressWindow(answer: HttpAnswer, remaining: number): void {
    assert.equal(answer.status, 401, answer.text);
    assert.equal(errorOf(answer).code, 'unauthorized');
    assert.deepEqual(describedWindowOf(answer), { limit: 60, remaining, reset: NEXT_MINUTE_SECONDS });
    assert.equal(rateLimitOf(answer).policy, '"minute";q=60;w=60');
    assert.equal(rateLimitOf(answer).state, `"minute";r=${remaining};t=30`);
  }

  it('401 without a key: the headers of the per-address window', async () => {
    const answer = await request(app, '/v1/pets', { headers: { 'x-forwarded-for': '192.0.2.10' } });
    assertUnauthorizedInAddressWindow(answer, 59);
  });

  it('401 with an unknown key: the same per-address window as without a key', async () => {
    const from = { 'x-forwarded-for': '192.0.2.11' };
    const withoutKey = await request(app, '/v1/pets', { headers: from });
    assert.equal(withoutKey.status, 401, withoutKey.text);
    assert.equal(rateLimitOf(withoutKey).remaining, 59);
    const unknownKey = await request(app, '/v1/pets', { key: generateApiKey(), headers: from });
    assertUnauthorizedInAddressWindow(unknownKey, 58);
  });

  it('429 over the limit', async () => {
    const limited = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 10 });
    assert.equal((await request(app, '/v1/pets', { key: limited.key })).status, 200);
    const answer = await request(app, '/v1/pets', { key: limited.key });
    assertRefused(answer, 'rate_limited');
    assert.deepEqual(describedWindowOf(answer), { limit: 1, remaining: 0, reset: NEXT_MINUTE_SECONDS });
    assert.equal(rateLimitOf(answer).policy, '"minute";q=1;w=60, "day";q=10;w=86400');
    assert.equal(rateLimitOf(answer).state, `"minute";r=0;t=30, "day";r=9;t=${DAY_LEFT_SECONDS}`);
  });

  it('410 for GET /v1/pets/{petId} after the sunset', async () => {
    const key = await businessKey();
    const afterSunset = Date.UTC(2030, 11, 6, 12, 0, 30);
    clock.set(afterSunset);
    try {
      const answer = await request(app, '/v1/pets/1', { key });
      assert.equal(answer.status, 410, answer.text);
      assert.equal(errorOf(answer).code, 'gone');
      assert.deepEqual(
        describedWindowOf(answer),
        { limit: 1000, remaining: 999, reset: afterSunset / 1000 + 30 },
        'a new minute and a new day',
      );
    } finally {
      clock.set(MID);
    }
  });
});

describeEachBackend('rate limits over HTTP: headers on 500', (backend) => {
  function assertInternalError(answer: HttpAnswer): void {
    assert.equal(answer.status, 500, answer.text);
    assert.equal(errorOf(answer).code, 'internal_error');
    assert.doesNotMatch(
      answer.text,
      /sqlite|no such table|database|SELECT|\bat \S+:\d+|\.ts\b|stack/i,
      'no internals in the body',
    );
    assert.deepEqual(describedWindowOf(answer), { limit: 60, remaining: 58, reset: NEXT_MINUTE_SECONDS });
  }

  it('keeps the rate-limit headers when a table has vanished underneath', async () => {
    const app = await startTestApp({ backend, clock: new ManualClock(MID) });
    try {
      const { key } = await app.newKey({ plan: 'free' });
      assert.equal((await request(app, '/v1/pets', { key })).status, 200);
      await app.execute('ALTER TABLE pets RENAME TO pets_moved_away');
      assertInternalError(await request(app, '/v1/pets', { key }));
    } finally {
      await app.close();
    }
  });

  it('keeps the rate-limit headers when the store is closed underneath', async () => {
    const app = await startTestApp({ backend, clock: new ManualClock(MID) });
    try {
      const { key } = await app.newKey({ plan: 'free' });
      // The key's verdict is now cached, so only the handler's query fails.
      assert.equal((await request(app, '/v1/pets', { key })).status, 200);
      await app.services.store.close();
      assertInternalError(await request(app, '/v1/pets', { key }));
    } finally {
      await app.close();
    }
  });
});
