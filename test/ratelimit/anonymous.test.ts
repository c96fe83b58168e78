import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { MemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, requestInSequence, statusesOf, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp } from '../support/test-app.ts';
import {
  assertRefused,
  describedWindowOf,
  MID,
  NEXT_MINUTE_SECONDS,
  rateLimitOf,
  retryAfterOf,
} from './rate-limit-assertions.ts';

/**
 * Requests without a valid key (none, another scheme, unknown, malformed) are limited per client
 * address (ANON_LIMIT_PER_MINUTE), not per key, so a flood of invented keys neither escapes the
 * limit nor grows the limiter's memory.
 */

const BAD_KEYS: readonly (string | undefined)[] = [
  undefined,
  'garbage',
  generateApiKey(),
  '',
  `${generateApiKey().slice(0, -1)}x`,
];

/** A request carrying `badKey` (undefined: no Authorization header; 'garbage': the Basic scheme). */
function withBadKey(badKey: string | undefined, headers: Record<string, string> = {}): HttpRequest {
  if (badKey === undefined) return { headers };
  return { headers: { ...headers, authorization: badKey === 'garbage' ? 'Basic Z2FyYmFnZQ==' : `Bearer ${badKey}` } };
}

describeEachBackend('rate limits over HTTP: requests without a valid key are limited per client address', (backend) => {
  it('answers 5 requests without a valid key 401 with the window headers, then 429', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({ backend, clock, env: { ANON_LIMIT_PER_MINUTE: '5' } });
    try {
      // Used once before the address fills up: an invented key from a full address is not even looked up.
      const { key } = await app.newKey({ plan: 'free' });
      assert.equal((await request(app, '/v1/pets', { key })).status, 200);
      const answers = [];
      for (const badKey of BAD_KEYS) answers.push(await request(app, '/v1/pets', withBadKey(badKey)));
      assert.deepEqual(statusesOf(answers), [401, 401, 401, 401, 401]);
      for (const [index, answer] of answers.entries()) {
        assert.equal(errorOf(answer).code, 'unauthorized');
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer\b/);
        assert.deepEqual(describedWindowOf(answer), { limit: 5, remaining: 4 - index, reset: NEXT_MINUTE_SECONDS });
        assert.equal(rateLimitOf(answer).policy, '"minute";q=5;w=60');
        assert.equal(rateLimitOf(answer).state, `"minute";r=${4 - index};t=30`);
      }
      const refused = await request(app, '/v1/pets', withBadKey(generateApiKey()));
      assertRefused(refused, 'rate_limited');
      assert.equal(retryAfterOf(refused), 30);
      assert.equal(rateLimitOf(refused).limit, 5);
      assert.equal(rateLimitOf(refused).remaining, 0);
      assertRefused(await request(app, '/v1/nowhere'), 'rate_limited');

      // A valid key is counted against its account, not the address.
      const valid = await request(app, '/v1/pets', { key });
      assert.equal(valid.status, 200, valid.text);
      assert.equal(rateLimitOf(valid).limit, 60);

      // Public documents are not limited.
      assert.equal((await request(app, '/v1/openapi.json')).status, 200);
      assert.equal((await request(app, '/healthz')).status, 200);

      clock.set(NEXT_MINUTE_SECONDS * 1000);
      const next = await request(app, '/v1/pets');
      assert.equal(next.status, 401);
      assert.equal(rateLimitOf(next).remaining, 4);
    } finally {
      await app.close();
    }
  });

  it('counts X-Forwarded-For addresses apart behind a trusted proxy', async () => {
    const app = await startTestApp({
      backend,
      clock: new ManualClock(MID),
      env: { ANON_LIMIT_PER_MINUTE: '5', TRUST_PROXY: '127.0.0.1' },
    });
    try {
      const from = (address: string): HttpRequest => withBadKey(undefined, { 'x-forwarded-for': address });
      const first = await requestInSequence(app, '/v1/pets', from('203.0.113.1'), 5);
      assert.deepEqual(statusesOf(first), [401, 401, 401, 401, 401]);
      assertRefused(await request(app, '/v1/pets', from('203.0.113.1')), 'rate_limited');
      const second = await request(app, '/v1/pets', from('203.0.113.2'));
      assert.equal(second.status, 401);
      assert.equal(rateLimitOf(second).remaining, 4);
      const direct = await request(app, '/v1/pets');
      assert.equal(direct.status, 401);
      assert.equal(rateLimitOf(direct).remaining, 4, 'the proxy itself (127.0.0.1) has its own window');
    } finally {
      await app.close();
    }
  });

  it('ignores X-Forwarded-For when TRUST_PROXY is unset', async () => {
    const app = await startTestApp({ backend, clock: new ManualClock(MID), env: { ANON_LIMIT_PER_MINUTE: '5' } });
    try {
      const answers = [];
      for (let i = 1; i <= 5; i += 1)
        answers.push(await request(app, '/v1/pets', withBadKey(undefined, { 'x-forwarded-for': `198.51.100.${i}` })));
      assert.deepEqual(
        answers.map((answer) => rateLimitOf(answer).remaining),
        [4, 3, 2, 1, 0],
      );
      assertRefused(
        await request(app, '/v1/pets', withBadKey(undefined, { 'x-forwarded-for': '198.51.100.99' })),
        'rate_limited',
      );
      assertRefused(await request(app, '/v1/pets'), 'rate_limited');
    } finally {
      await app.close();
    }
  });
});

describeEachBackend('rate limits over HTTP: the key verifier stays bounded under a flood of bad keys', (backend) => {
  const app = appForSuite({ backend, clock: new ManualClock(MID) });

  it('keeps the key verifier cache within its bound after 20,000 distinct unknown keys', async () => {
    const verifier = app.services.keyVerifier;
    for (let i = 0; i < 20_000; i += 1) {
      const verdict = await verifier.verify(`Bearer ${generateApiKey()}`);
      assert.equal(verdict.ok, false);
    }
    assert.ok(verifier.size() <= 10_000, `key verifier holds ${verifier.size()} entries`);
    assert.ok(verifier.size() > 0);
  });
});

describe('rate limits over HTTP: the in-memory limiter stays bounded under a flood of bad keys', () => {
  // The default pair: SQLite file + in-memory limiter, whose state this test counts.
  const app = appForSuite({ clock: new ManualClock(MID) });

  it('creates no per-key limiter state for 2,000 requests with distinct bad keys from one address', async () => {
    const limiter = app.services.limiter;
    assert.ok(limiter instanceof MemoryLimiter, 'the default limiter is the in-memory one');
    assert.equal(limiter.size(), 0);
    const keys = Array.from({ length: 2000 }, (_, i) =>
      i % 2 === 0 ? generateApiKey() : `pst_${i.toString(36).padStart(36, 'z')}`,
    );
    const statuses: number[] = [];
    for (let start = 0; start < keys.length; start += 100) {
      const batch = keys.slice(start, start + 100);
      const answers = await Promise.all(batch.map((badKey) => request(app, '/v1/pets', { key: badKey })));
      statuses.push(...statusesOf(answers));
    }
    // The default per-address limit is 60 a minute: 60 answers 401, every other one 429.
    assert.equal(statuses.length, 2000);
    assert.equal(statuses.filter((status) => status === 401).length, 60);
    assert.equal(statuses.filter((status) => status === 429).length, 1940);
    assert.equal(limiter.size(), 1, 'only the address 127.0.0.1 is held');
    assert.ok(app.services.keyVerifier.size() <= 10_000);
  });
});
