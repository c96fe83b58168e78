import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, requestConcurrently, requestInSequence, statusesOf } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  assertRefused,
  DAY_LEFT_SECONDS,
  describedWindowOf,
  MID,
  MINUTE_MS,
  NEXT_MIDNIGHT_SECONDS,
  NEXT_MINUTE_SECONDS,
  rateLimitOf,
  retryAfterOf,
  sleep,
} from './rate-limit-assertions.ts';

/**
 * The per-account minute and day windows through the real HTTP app: exact counting under
 * concurrency, one quota for every key of an account, rollover at the UTC minute and UTC
 * midnight, and plan changes. All window timing runs on a ManualClock.
 */

describeEachBackend('rate limits over HTTP: exact counting per account', (backend) => {
  // A high ban threshold, so every refusal here is a plain 429 rate_limited (bans.test.ts has the bans).
  const app = appForSuite({ backend, clock: new ManualClock(MID), env: { BAN_THRESHOLD: '1000' } });

  it('admits exactly 60 of 200 concurrent GET /v1/pets on a free account; the rest get 429 rate_limited', async () => {
    const { key } = await app.newKey({ plan: 'free' });
    const answers = await requestConcurrently(app, '/v1/pets', { key }, 200);
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.equal(admitted.length, 60);
    assert.equal(refused.length, 140);
    assert.deepEqual(
      admitted.map((answer) => rateLimitOf(answer).remaining).sort((a, b) => a - b),
      Array.from({ length: 60 }, (_, i) => i),
      'each admitted request saw its own remaining count',
    );
    for (const answer of refused) {
      assert.equal(answer.status, 429);
      assert.equal(errorOf(answer).code, 'rate_limited');
      assert.equal(retryAfterOf(answer), 30, 'Retry-After: whole seconds until the minute resets');
      assert.deepEqual(describedWindowOf(answer), { limit: 60, remaining: 0, reset: NEXT_MINUTE_SECONDS });
    }
  });

  it('shares the quota between two keys of the same account', async () => {
    const first = await app.newKey({ plan: 'free' });
    const second = await app.services.accounts.createKey(first.account);
    const a = await requestInSequence(app, '/v1/pets', { key: first.key }, 30);
    const b = await requestInSequence(app, '/v1/pets', { key: second.key }, 30);
    assert.deepEqual(statusesOf([...a, ...b]), Array<number>(60).fill(200));
    const [secondKeyFirstAnswer] = b;
    assert.ok(secondKeyFirstAnswer);
    assert.equal(rateLimitOf(secondKeyFirstAnswer).remaining, 29, 'the second key starts where the first left off');
    assertRefused(await request(app, '/v1/pets', { key: first.key }), 'rate_limited');
    assertRefused(await request(app, '/v1/pets', { key: second.key }), 'rate_limited');
    // A brand-new key of the same account neither resets nor multiplies the quota.
    const third = await app.services.accounts.createKey(first.account);
    assertRefused(await request(app, '/v1/pets', { key: third.key }), 'rate_limited');
  });

  it('keeps accounts apart', async () => {
    const busy = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const quiet = await app.newKey({ plan: 'free' });
    assert.equal((await request(app, '/v1/pets', { key: busy.key })).status, 200);
    assertRefused(await request(app, '/v1/pets', { key: busy.key }), 'rate_limited');
    const answer = await request(app, '/v1/pets', { key: quiet.key });
    assert.equal(answer.status, 200);
    assert.equal(rateLimitOf(answer).remaining, 59);
  });

  it('counts every authenticated request whatever its outcome, except 429s', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 5, perDay: 1000 });
    const outcomes = [
      await request(app, '/v1/pets', { key }),
      await request(app, '/v1/nowhere', { key }),
      await request(app, '/v1/pets?limit=0', { key }),
      await request(app, '/v1/pets', { key, method: 'DELETE' }),
      await request(app, '/v1/pets', { key }),
      await request(app, '/v1/pets', { key }),
      await request(app, '/v1/pets', { key }),
    ];
    assert.deepEqual(statusesOf(outcomes), [200, 404, 400, 405, 200, 429, 429]);
    assert.deepEqual(
      outcomes.map((answer) => rateLimitOf(answer).remaining),
      [4, 3, 2, 1, 0, 0, 0],
    );
    // The refused requests used nothing of the day: 5 of 1000 are gone, not 7.
    clock(app).set(NEXT_MINUTE_SECONDS * 1000);
    try {
      const nextMinute = await request(app, '/v1/pets', { key });
      assert.equal(nextMinute.status, 200, nextMinute.text);
      assert.match(rateLimitOf(nextMinute).state, /"day";r=994;/);
    } finally {
      clock(app).set(MID);
    }
  });
});

function clock(app: TestApp): ManualClock {
  assert.ok(app.clock instanceof ManualClock, 'the suite stands its app on a ManualClock');
  return app.clock;
}

describeEachBackend('rate limits over HTTP: the day window', (backend) => {
  it('refuses the 101st request of an enterprise account with 100 per day and 1000 per minute', async () => {
    const manual = new ManualClock(MID);
    const app = await startTestApp({ backend, clock: manual });
    try {
      const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1000, perDay: 100 });
      const first = await request(app, '/v1/pets', { key });
      assert.equal(first.status, 200);
      assert.deepEqual(describedWindowOf(first), { limit: 100, remaining: 99, reset: NEXT_MIDNIGHT_SECONDS });
      assert.equal(rateLimitOf(first).policy, '"minute";q=1000;w=60, "day";q=100;w=86400');
      assert.equal(rateLimitOf(first).state, `"minute";r=999;t=30, "day";r=99;t=${DAY_LEFT_SECONDS}`);
      const rest = await requestConcurrently(app, '/v1/pets', { key }, 99);
      assert.deepEqual(statusesOf(rest), Array<number>(99).fill(200));

      const refused = await request(app, '/v1/pets', { key });
      assertRefused(refused, 'rate_limited');
      assert.equal(retryAfterOf(refused), DAY_LEFT_SECONDS, 'Retry-After: until UTC midnight');
      assert.deepEqual(describedWindowOf(refused), { limit: 100, remaining: 0, reset: NEXT_MIDNIGHT_SECONDS });
      assert.equal(rateLimitOf(refused).policy, '"minute";q=1000;w=60, "day";q=100;w=86400');
      assert.equal(rateLimitOf(refused).state, `"minute";r=900;t=30, "day";r=0;t=${DAY_LEFT_SECONDS}`);
      // A new minute does not help while the day is full.
      manual.advance(MINUTE_MS);
      const stillRefused = await request(app, '/v1/pets', { key });
      assertRefused(stillRefused, 'rate_limited');
      assert.equal(rateLimitOf(stillRefused).reset, NEXT_MIDNIGHT_SECONDS);
    } finally {
      await app.close();
    }
  });
});

describeEachBackend('rate limits over HTTP: windows roll over on the UTC minute and UTC midnight', (backend) => {
  it('allows again at the next minute once the minute is exhausted', async () => {
    const manual = new ManualClock(MID);
    const app = await startTestApp({ backend, clock: manual });
    try {
      const { key } = await app.newKey({ plan: 'free' });
      const filled = await requestInSequence(app, '/v1/pets', { key }, 60);
      assert.deepEqual(statusesOf(filled), Array<number>(60).fill(200));
      const refused = await request(app, '/v1/pets', { key });
      assertRefused(refused, 'rate_limited');
      assert.equal(retryAfterOf(refused), 30);
      manual.advance(29_000);
      assertRefused(await request(app, '/v1/pets', { key }), 'rate_limited');
      manual.set(NEXT_MINUTE_SECONDS * 1000);
      const allowed = await request(app, '/v1/pets', { key });
      assert.equal(allowed.status, 200, allowed.text);
      assert.deepEqual(describedWindowOf(allowed), { limit: 60, remaining: 59, reset: NEXT_MINUTE_SECONDS + 60 });
    } finally {
      await app.close();
    }
  });

  it('allows again after UTC midnight once the day is exhausted near 23:59:30', async () => {
    const manual = new ManualClock(Date.UTC(2026, 5, 1, 23, 59, 30));
    const app = await startTestApp({ backend, clock: manual });
    try {
      const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1000, perDay: 5 });
      const filled = await requestInSequence(app, '/v1/pets', { key }, 5);
      assert.deepEqual(statusesOf(filled), [200, 200, 200, 200, 200]);
      const refused = await request(app, '/v1/pets', { key });
      assertRefused(refused, 'rate_limited');
      assert.equal(retryAfterOf(refused), 30);
      assert.equal(rateLimitOf(refused).reset, NEXT_MIDNIGHT_SECONDS);
      manual.set(Date.UTC(2026, 5, 2, 0, 0, 0, 500));
      const allowed = await request(app, '/v1/pets', { key });
      assert.equal(allowed.status, 200, allowed.text);
      assert.deepEqual(describedWindowOf(allowed), { limit: 5, remaining: 4, reset: NEXT_MIDNIGHT_SECONDS + 86_400 });
    } finally {
      await app.close();
    }
  });
});

describeEachBackend('rate limits over HTTP: a plan change takes effect within one second', (backend) => {
  it('applies at once with KEY_CACHE_TTL_MS=0', async () => {
    const app = await startTestApp({ backend, clock: new ManualClock(MID), env: { KEY_CACHE_TTL_MS: '0' } });
    try {
      const { key, account } = await app.newKey({ plan: 'free' });
      const filled = await requestInSequence(app, '/v1/pets', { key }, 60);
      assert.deepEqual(statusesOf(filled), Array<number>(60).fill(200));
      assertRefused(await request(app, '/v1/pets', { key }), 'rate_limited');

      await app.services.accounts.setPlan(account, { plan: 'pro' });
      const upgraded = await request(app, '/v1/pets', { key });
      assert.equal(upgraded.status, 200, upgraded.text);
      assert.equal(rateLimitOf(upgraded).limit, 300);
      assert.equal(rateLimitOf(upgraded).remaining, 300 - 61, 'the minute keeps its count across the change');
      assert.equal(rateLimitOf(upgraded).policy, '"minute";q=300;w=60, "day";q=10000;w=86400');

      await app.services.accounts.setPlan(account, { plan: 'enterprise', perMinute: 61, perDay: 5000 });
      const capped = await request(app, '/v1/pets', { key });
      assertRefused(capped, 'rate_limited');
      assert.equal(rateLimitOf(capped).limit, 61);

      await app.services.accounts.setPlan(account, { plan: 'free' });
      const downgraded = await request(app, '/v1/pets', { key });
      assertRefused(downgraded, 'rate_limited');
      assert.equal(rateLimitOf(downgraded).limit, 60);
    } finally {
      await app.close();
    }
  });

  it('applies within one second of real time with the default key cache', async () => {
    const app = await startTestApp({ backend, clock: new ManualClock(MID), env: { KEY_CACHE_TTL_MS: '1000' } });
    try {
      const { key, account } = await app.newKey({ plan: 'free' });
      assert.equal(rateLimitOf(await request(app, '/v1/pets', { key })).limit, 60);
      await app.services.accounts.setPlan(account, { plan: 'business' });
      await sleep(1100);
      const answer = await request(app, '/v1/pets', { key });
      assert.equal(answer.status, 200);
      assert.equal(rateLimitOf(answer).limit, 1000);
      assert.equal(rateLimitOf(answer).remaining, 998);
    } finally {
      await app.close();
    }
  });
});
