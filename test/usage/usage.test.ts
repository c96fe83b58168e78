import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/app.ts';
import type { UsageService } from '../../src/usage/usage-service.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  DAY_LEFT_SECONDS,
  DAY_MS,
  driveToBan,
  MID,
  NEXT_MIDNIGHT_SECONDS,
  NEXT_MINUTE_SECONDS,
  rateLimitOf,
} from '../ratelimit/rate-limit-assertions.ts';

/**
 * GET /v1/usage through the real app: the account's windows, the key's state and the account's
 * calls of deprecated operations, read without spending the account's quota, under a small
 * per-account limit of its own, and answered to a banned key. `request()` checks every 200 and error
 * against the served document.
 */

const USAGE_PER_MINUTE = 4;

interface Usage {
  readonly account: { readonly name: string; readonly plan: string };
  readonly windows: Record<
    'minute' | 'day',
    { readonly limit: number; readonly remaining: number; readonly reset: number }
  >;
  readonly key: {
    readonly id: string;
    readonly expiresAt: string | null;
    readonly ban: { readonly until: string; readonly retryAfter: number } | null;
  };
  readonly deprecated: readonly DeprecatedUsage[] | null;
}

interface DeprecatedUsage {
  readonly operation: string;
  readonly sunset: string;
  readonly since: string;
  readonly calls: number;
  readonly lastCall: string | null;
  readonly keys: ReadonlyArray<{ readonly id: string; readonly calls: number; readonly lastCall: string }>;
}

const SUNSET = '2030-12-05T00:00:00.000Z';
const iso = (ms: number): string => new Date(ms).toISOString();

/** The deprecated list of an account that has not called getPet in the last 30 days, read at `now`. */
function noDeprecatedCalls(now: number): DeprecatedUsage[] {
  return [{ operation: 'getPet', sunset: SUNSET, since: iso(now - 30 * DAY_MS), calls: 0, lastCall: null, keys: [] }];
}

function usageOf(answer: HttpAnswer): Usage {
  assert.equal(answer.status, 200, answer.text);
  return answer.json<Usage>();
}

/** What a pets request reports as left in the minute window (and spends one of). */
async function minuteLeftAfterPetsCall(app: TestApp, key: string): Promise<number> {
  const answer: HttpAnswer = await request(app, '/v1/pets', { key });
  assert.equal(answer.status, 200, answer.text);
  return rateLimitOf(answer).remaining;
}

describeEachBackend('GET /v1/usage', (backend) => {
  let app: TestApp;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock(MID);
    app = await startTestApp({
      backend,
      clock,
      env: { USAGE_PER_MINUTE: String(USAGE_PER_MINUTE), BAN_THRESHOLD: '2' },
    });
  });
  after(() => app.close());

  it('reports the account, both windows and the key, in the documented shape', async () => {
    clock.set(MID);
    const { key, keyId, account } = await app.newKey({ plan: 'free' });
    for (let i = 0; i < 3; i += 1) await minuteLeftAfterPetsCall(app, key);
    const answer = await request(app, '/v1/usage', { key });
    assert.deepEqual(usageOf(answer), {
      account: { name: account, plan: 'free' },
      windows: {
        minute: { limit: 60, remaining: 57, reset: NEXT_MINUTE_SECONDS },
        day: { limit: 1000, remaining: 997, reset: NEXT_MIDNIGHT_SECONDS },
      },
      key: { id: keyId, expiresAt: null, scopes: ['pets:read', 'pets:write', 'usage:read'], ban: null },
      deprecated: noDeprecatedCalls(MID),
    });
    const fields = rateLimitOf(answer);
    assert.equal(fields.remaining, 57, 'the headers a pets request would carry, without its spending');
    assert.equal(fields.reset, NEXT_MINUTE_SECONDS);
    assert.equal(fields.policy, '"minute";q=60;w=60, "day";q=1000;w=86400');
    assert.equal(fields.state, `"minute";r=57;t=30, "day";r=997;t=${DAY_LEFT_SECONDS}`);
  });

  it("spends none of the account's quota", async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'pro' });
    assert.equal(await minuteLeftAfterPetsCall(app, key), 299);
    for (let i = 0; i < USAGE_PER_MINUTE - 1; i += 1) {
      assert.equal(usageOf(await request(app, '/v1/usage', { key })).windows.minute.remaining, 299);
    }
    assert.equal(await minuteLeftAfterPetsCall(app, key), 298, 'the usage calls in between counted nothing');
    assert.equal(usageOf(await request(app, '/v1/usage', { key })).windows.day.remaining, 9_998);
  });

  it('has a limit of its own, per account: 429 naming it, never a ban, the account untouched', async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'free' });
    const second = await app.newKey({ plan: 'free' });
    for (let i = 0; i < USAGE_PER_MINUTE; i += 1) usageOf(await request(app, '/v1/usage', { key }));
    const refused = await request(app, '/v1/usage', { key });
    assertError(refused, 429, 'rate_limited', '/v1/usage', `${USAGE_PER_MINUTE} per minute`);
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.deepEqual(rateLimitOf(refused), {
      limit: USAGE_PER_MINUTE,
      remaining: 0,
      reset: NEXT_MINUTE_SECONDS,
      policy: `"minute";q=${USAGE_PER_MINUTE};w=60`,
      state: '"minute";r=0;t=30',
    });
    // Far past the ban threshold (2): usage refusals strike nothing.
    for (let i = 0; i < 8; i += 1) assertError(await request(app, '/v1/usage', { key }), 429, 'rate_limited');
    assert.equal(await minuteLeftAfterPetsCall(app, key), 59, "the account's windows were not touched");
    // Another account has its own usage limit.
    usageOf(await request(app, '/v1/usage', { key: second.key }));
    clock.set(MID + 30_000);
    const next = usageOf(await request(app, '/v1/usage', { key }));
    assert.equal(next.key.ban, null, 'the refusals did not ban the key');
    assert.equal(next.windows.minute.remaining, 60, 'a new minute');
  });

  it('answers a banned key, with its ban, and the ban in the rate-limit headers', async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    await driveToBan(app, key);
    const answer = await request(app, '/v1/usage', { key });
    const usage = usageOf(answer);
    const until = MID + 900_000;
    assert.deepEqual(usage.key.ban, { until: new Date(until).toISOString(), retryAfter: 900 });
    assert.deepEqual(usage.windows.minute, { limit: 2, remaining: 0, reset: NEXT_MINUTE_SECONDS });
    assert.equal(answer.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(answer.headers.get('x-ratelimit-reset'), String(until / 1000));
    const pets = await request(app, '/v1/pets', { key });
    assert.equal(pets.status, 429);
    assert.equal(errorOf(pets).code, 'key_banned', 'the key is still banned for everything else');
  });

  it("names the account's getPet calls of the last 30 days by key, and never another account's", async () => {
    clock.set(MID);
    const { key, keyId, account } = await app.newKey({ plan: 'pro' });
    const other = await app.services.accounts.createKey(account);
    const stranger = await app.newKey({ plan: 'pro' });
    const created = await request(app, '/v1/pets', { method: 'POST', key, json: { name: 'Rex', categoryId: 3 } });
    const petId = created.json<{ id: number }>().id;
    const getPet = async (withKey: string, id = petId): Promise<void> => {
      const answer = await request(app, `/v1/pets/${id}`, { key: withKey });
      assert.ok(answer.status === 200 || answer.status === 404, answer.text);
    };
    await getPet(key);
    await getPet(key);
    clock.set(MID + 120_000);
    for (let i = 0; i < 3; i += 1) await getPet(other.key);
    await getPet(other.key, petId + 1000);
    await getPet(stranger.key);
    const readAt = MID + 180_000;
    clock.set(readAt);
    // Each key of the account reads the calls of all its keys.
    assert.deepEqual(usageOf(await request(app, '/v1/usage', { key: other.key })).deprecated, [
      {
        operation: 'getPet',
        sunset: SUNSET,
        since: iso(readAt - 30 * DAY_MS),
        calls: 6,
        lastCall: iso(MID + 120_000),
        keys: [
          { id: other.record.id, calls: 4, lastCall: iso(MID + 120_000) },
          { id: keyId, calls: 2, lastCall: iso(MID) },
        ],
      },
    ]);
    const theirs = usageOf(await request(app, '/v1/usage', { key: stranger.key })).deprecated;
    assert.deepEqual(
      theirs?.map((entry) => [entry.calls, entry.keys.map((each) => each.id)]),
      [[1, [stranger.keyId]]],
    );
    // 31 days later, those calls are out of the period.
    clock.set(MID + 31 * DAY_MS);
    assert.deepEqual(
      usageOf(await request(app, '/v1/usage', { key })).deprecated,
      noDeprecatedCalls(MID + 31 * DAY_MS),
    );
  });

  it("shows the key's expiry", async () => {
    clock.set(MID);
    const { key } = await app.newKey({ expiresInMs: DAY_MS });
    const usage = usageOf(await request(app, '/v1/usage', { key }));
    assert.equal(usage.key.expiresAt, new Date(MID + DAY_MS).toISOString());
  });

  it('refuses a missing or unknown key with 401, and other methods with 405', async () => {
    clock.set(MID);
    const missing = await request(app, '/v1/usage');
    assertError(missing, 401, 'unauthorized');
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
    assertError(await request(app, '/v1/usage', { key: `pst_${'a'.repeat(36)}` }), 401, 'unauthorized');
    const { key } = await app.newKey();
    const post = await request(app, '/v1/usage', { method: 'POST', key, body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(errorOf(post).code, 'method_not_allowed');
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await request(app, '/v1/usage', { method: 'HEAD', key });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });
});

describe('GET /v1/usage while the usage history cannot be read', () => {
  let app: TestApp;
  let stalled: FastifyInstance;
  let target: { url: string };
  const STORAGE_TIMEOUT_MS = 400;

  before(async () => {
    app = await startTestApp({ clock: new ManualClock(MID) });
    // The same services, but a usage history that never answers, as storage on a silent network.
    const usage: UsageService = Object.assign(Object.create(app.services.usage) as UsageService, {
      deprecated: () => new Promise<never>(() => undefined),
    });
    const config = { ...app.services.config, storageTimeoutMs: STORAGE_TIMEOUT_MS };
    stalled = await buildApp({ ...app.services, config, usage });
    target = { url: await stalled.listen({ port: 0, host: '127.0.0.1' }) };
  });
  after(async () => {
    await stalled.close();
    await app.close();
  });

  it('answers the standing without the deprecated calls (null), within half the storage timeout', async () => {
    const { key } = await app.newKey();
    const started = performance.now();
    const usage = usageOf(await request(target, '/v1/usage', { key }));
    const ms = performance.now() - started;
    assert.equal(usage.deprecated, null);
    assert.equal(usage.windows.minute.limit, 60);
    assert.ok(ms >= STORAGE_TIMEOUT_MS / 2 - 20 && ms < STORAGE_TIMEOUT_MS, `answered after ${Math.round(ms)} ms`);
  });
});

describe('USAGE_PER_MINUTE', () => {
  it('defaults to 30 and is refused at start-up unless a positive integer', () => {
    assert.equal(loadConfig({}).usagePerMinute, 30);
    assert.equal(loadConfig({ USAGE_PER_MINUTE: '5' }).usagePerMinute, 5);
    for (const value of ['0', '-1', 'many']) {
      assert.throws(
        () => loadConfig({ USAGE_PER_MINUTE: value }),
        (error: unknown) =>
          error instanceof ConfigError && /^invalid configuration: USAGE_PER_MINUTE /.test(error.message),
        value,
      );
    }
  });
});
