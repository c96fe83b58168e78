import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import {
  errorOf,
  request,
  requestConcurrently,
  requestInSequence,
  statusesOf,
  type HttpAnswer,
} from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import {
  assertRefused,
  DAY_MS,
  driveToBan,
  MID,
  MID_SECONDS,
  MINUTE_MS,
  rateLimitOf,
  retryAfterOf,
  sleep,
} from './rate-limit-assertions.ts';

/**
 * Temporary bans through the real HTTP app: a key that keeps going after its first 429 is banned,
 * each further ban within 24 hours doubles up to a cap, and an operator lifts a ban through the
 * account service or the CLI. All ban timing runs on a ManualClock.
 */

const ROOT = join(import.meta.dirname, '..', '..');

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where the CLI works: the test app's database, and its Redis when it has one. */
interface CliTarget {
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string;
}

/** Runs the operator CLI as an operator would, with the test app's configuration. */
function runCli(target: CliTarget, args: readonly string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: target.databaseUrl, LOG_LEVEL: 'silent' };
  if (target.redisUrl !== undefined)
    Object.assign(env, { REDIS_URL: target.redisUrl, REDIS_PREFIX: target.redisPrefix });
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface KeyListing {
  readonly id: string;
  readonly bannedUntil: string | null;
}

function keyListing(run: CliRun): KeyListing[] {
  assert.equal(run.code, 0, run.stderr);
  const parsed: unknown = JSON.parse(run.stdout);
  assert.ok(Array.isArray(parsed), run.stdout);
  return parsed.map((entry: unknown) => {
    assert.ok(typeof entry === 'object' && entry !== null);
    const record = entry as Record<string, unknown>;
    assert.equal(typeof record.id, 'string');
    assert.ok(
      record.bannedUntil === null || typeof record.bannedUntil === 'string',
      `bannedUntil: ${JSON.stringify(record.bannedUntil)}`,
    );
    return { id: String(record.id), bannedUntil: record.bannedUntil === null ? null : String(record.bannedUntil) };
  });
}

/** Asks every 50 ms until the key is no longer refused as banned; fails after `withinMs`. */
async function untilNotBanned(app: TestApp, key: string, withinMs: number): Promise<HttpAnswer> {
  const started = performance.now();
  for (;;) {
    const answer = await request(app, '/v1/pets', { key });
    if (answer.status !== 429 || errorOf(answer).code !== 'key_banned') return answer;
    const waited = performance.now() - started;
    assert.ok(waited < withinMs, `still banned ${Math.round(waited)} ms after the lifting`);
    await sleep(50);
  }
}

/** 200 concurrent requests of a fresh free key: 60 pass, and the burst ends in a first ban of 900 s. */
async function burstIntoFirstBan(app: TestApp): Promise<{ key: string; keyId: string }> {
  const { key, keyId } = await app.newKey({ plan: 'free' });
  const answers = await requestConcurrently(app, '/v1/pets', { key }, 200);
  assert.equal(answers.filter((answer) => answer.status === 200).length, 60);
  const banned = answers.filter((answer) => answer.status === 429 && errorOf(answer).code === 'key_banned');
  assert.ok(banned.length > 0, 'the burst ends in a ban');
  assert.deepEqual([...new Set(banned.map(retryAfterOf))], [900], 'a first ban lasts 900 s');
  return { key, keyId };
}

describeEachBackend('rate limits over HTTP: temporary bans', (backend) => {
  const clock = new ManualClock(MID);
  const app = appForSuite({ backend, clock, env: { KEY_CACHE_TTL_MS: '0' } });

  it('bans a free key after the first 429 and 10 more, for 900 s, and only that key', async () => {
    clock.set(MID);
    const first = await app.newKey({ plan: 'free' });
    const second = await app.services.accounts.createKey(first.account);
    const admitted = await requestInSequence(app, '/v1/pets', { key: first.key }, 60);
    assert.deepEqual(statusesOf(admitted), Array<number>(60).fill(200));
    const tolerated = await requestInSequence(app, '/v1/pets', { key: first.key }, 11);
    assert.equal(tolerated.length, 11);
    for (const answer of tolerated) assertRefused(answer, 'rate_limited');

    const banned = await request(app, '/v1/pets', { key: first.key });
    assertRefused(banned, 'key_banned');
    assert.equal(retryAfterOf(banned), 900);
    const headers = rateLimitOf(banned);
    assert.equal(headers.remaining, 0);
    assert.equal(headers.reset, MID_SECONDS + 900, 'X-RateLimit-Reset: the end of the ban');
    assert.match(errorOf(banned).message, /ban/i);

    // The other key of the account is not banned: it only shares the exhausted quota.
    assertRefused(await request(app, '/v1/pets', { key: second.key }), 'rate_limited');

    // A new minute frees the account's quota, but not the banned key.
    clock.advance(60_000);
    const stillBanned = await request(app, '/v1/pets', { key: first.key });
    assertRefused(stillBanned, 'key_banned');
    assert.equal(retryAfterOf(stillBanned), 840);
    assert.equal(rateLimitOf(stillBanned).reset, MID_SECONDS + 900);
    assert.equal(rateLimitOf(stillBanned).remaining, 0);
    const other = await request(app, '/v1/pets', { key: second.key });
    assert.equal(other.status, 200, other.text);
    assert.equal(rateLimitOf(other).remaining, 59, 'requests refused as banned counted nothing');

    // The ban ends by itself.
    clock.set(MID + 900_000);
    const free = await request(app, '/v1/pets', { key: first.key });
    assert.equal(free.status, 200, free.text);
  });

  it('bans within a burst of 200 concurrent requests: 60 admitted, 11 rate_limited, then one 900 s ban', async () => {
    clock.set(MID);
    const { key, keyId } = await app.newKey({ plan: 'free' });
    const answers = await requestConcurrently(app, '/v1/pets', { key }, 200);
    const refused = answers.filter((answer) => answer.status === 429);
    const codes = refused.map((answer) => errorOf(answer).code);
    assert.equal(answers.filter((answer) => answer.status === 200).length, 60);
    assert.equal(refused.length, 140);
    // The ban begins in the limiter's atomic step: exactly 11 refusals before it, whatever the limiter.
    const limited = codes.filter((code) => code === 'rate_limited').length;
    assert.equal(limited, 11);
    assert.equal(codes.filter((code) => code === 'key_banned').length, 129);
    for (const answer of refused) {
      const banned = errorOf(answer).code === 'key_banned';
      assert.equal(retryAfterOf(answer), banned ? 900 : 30);
    }
    assert.equal(await app.services.store.bans.countSince(keyId, 0), 1, 'one offence, one ban');
  });

  it('does not ban a key that waits for Retry-After', async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
    for (let round = 0; round < 3; round += 1) {
      assert.deepEqual(statusesOf(await requestInSequence(app, '/v1/pets', { key }, 2)), [200, 200]);
      const refused = await requestInSequence(app, '/v1/pets', { key }, 10);
      assert.equal(refused.length, 10);
      for (const answer of refused) assertRefused(answer, 'rate_limited');
      clock.advance(MINUTE_MS);
    }
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
  });

  it('doubles each further ban within 24 hours (900, 1800, 3600 s) and starts over after a quiet day', async () => {
    clock.set(MID);
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
    for (const expected of [900, 1800, 3600]) {
      const started = clock.now();
      const { limited, banned } = await driveToBan(app, key);
      assert.equal(limited, 11, 'the first 429 and 10 more are tolerated');
      assert.equal(retryAfterOf(banned), expected);
      assert.equal(rateLimitOf(banned).reset, started / 1000 + expected);
      clock.advance(expected * 1000 - 1000);
      assertRefused(await request(app, '/v1/pets', { key }), 'key_banned');
      clock.advance(1000);
    }
    clock.advance(DAY_MS);
    const { banned } = await driveToBan(app, key);
    assert.equal(retryAfterOf(banned), 900, 'no ban in the last 24 hours: back to the base length');
  });

  it('an operator lifts a ban through the account service, at once', async () => {
    clock.set(MID);
    const { key, keyId } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
    await driveToBan(app, key);
    await app.services.accounts.liftBan(keyId);
    const lifted = await request(app, '/v1/pets', { key });
    assertRefused(lifted, 'rate_limited');
    clock.advance(MINUTE_MS);
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    await assert.rejects(app.services.accounts.liftBan(keyId), /not banned/);
    await assert.rejects(app.services.accounts.liftBan('key_doesnotexist00000'), /no key/);
  });
});

describeEachBackend('rate limits over HTTP: lifting a ban with the default key cache', (backend) => {
  it('lets the key through within one second of real time', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({ backend, clock, env: { KEY_CACHE_TTL_MS: '1000' } });
    try {
      const { key, keyId } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
      await driveToBan(app, key);
      clock.advance(MINUTE_MS);
      assertRefused(await request(app, '/v1/pets', { key }), 'key_banned');
      await app.services.accounts.liftBan(keyId);
      await sleep(1100);
      const answer = await request(app, '/v1/pets', { key });
      assert.equal(answer.status, 200, answer.text);
    } finally {
      await app.close();
    }
  });
});

describeEachBackend('rate limits over HTTP: bans with a storage round-trip', (backend) => {
  // A ban store that answers after a network round-trip, like PostgreSQL, even over SQLite: every
  // ban-store call takes 5 ms more. One burst is still one offence.
  it('records one ban for one burst and escalates only on a later offence', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({ backend, clock });
    try {
      const bans = app.services.store.bans;
      const countSince = bans.countSince.bind(bans);
      const ban = bans.ban.bind(bans);
      bans.countSince = async (keyId: string, since: number) => {
        await sleep(5);
        return countSince(keyId, since);
      };
      bans.ban = async (keyId: string, startedAt: number, until: number) => {
        await sleep(5);
        await ban(keyId, startedAt, until);
      };
      const { key, keyId } = await burstIntoFirstBan(app);
      assert.equal(await countSince(keyId, 0), 1, 'one offence, one ban');
      clock.set(MID + 900_000);
      const { banned: second } = await driveToBan(app, key);
      assert.equal(retryAfterOf(second), 1800, 'the second ban doubles once');
    } finally {
      await app.close();
    }
  });
});

describe('rate limits over HTTP: bans on SQLite with Redis counters (shared by instances)', () => {
  // No simulated latency here: the real RedisLimiter over a real Redis, SQLite for bans. (The
  // PostgreSQL + Redis pair runs the same burst in the temporary-bans suite.)
  it('records one ban of 900 s for one burst of 200 concurrent requests', async (t) => {
    const redis = await redisBackend();
    if (redis.skip !== undefined) {
      t.skip(redis.skip);
      return;
    }
    const clock = new ManualClock(MID);
    const app = await startTestApp({ clock, env: { REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() } });
    try {
      const { keyId } = await burstIntoFirstBan(app);
      assert.equal(await app.services.store.bans.countSince(keyId, 0), 1, 'one offence, one ban');
    } finally {
      await app.close();
      await redis.cleanup();
    }
  });
});

describeEachBackend('rate limits over HTTP: ban lengths are configurable and capped', (backend) => {
  it('caps the doubling at BAN_MAX_SECONDS, with BAN_THRESHOLD and BAN_BASE_SECONDS honoured', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({
      backend,
      clock,
      env: { KEY_CACHE_TTL_MS: '0', BAN_THRESHOLD: '2', BAN_BASE_SECONDS: '60', BAN_MAX_SECONDS: '150' },
    });
    try {
      const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 1000 });
      for (const expected of [60, 120, 150, 150]) {
        clock.set(Math.ceil(clock.now() / MINUTE_MS) * MINUTE_MS + 30_000);
        const { limited, banned } = await driveToBan(app, key);
        assert.equal(limited, 3, 'the first 429 and BAN_THRESHOLD more are tolerated');
        assert.equal(retryAfterOf(banned), expected);
        clock.advance(expected * 1000);
      }
    } finally {
      await app.close();
    }
  });
});

describeEachBackend('rate limits over HTTP: bans through the operator CLI', (backend) => {
  // The CLI runs on the real clock: stand the app on it too, frozen.
  const clock = new ManualClock(Date.now());
  const app = appForSuite({ backend, clock, env: { KEY_CACHE_TTL_MS: '0' } });

  it('key list shows the ban; ban lift ends it; lifting again fails; bad arguments exit 2', async () => {
    const { key, keyId, account } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
    const spare = await app.services.accounts.createKey(account);
    const bannedAt = clock.now();
    const { banned } = await driveToBan(app, key);
    assert.equal(retryAfterOf(banned), 900);

    const listed = keyListing(await runCli(app.services.config, ['key', 'list', '--account', account, '--json']));
    assert.deepEqual(
      listed.map((entry) => [entry.id, entry.bannedUntil]).sort(),
      [
        [keyId, new Date(bannedAt + 900_000).toISOString()],
        [spare.record.id, null],
      ].sort(),
    );

    const lift = await runCli(app.services.config, ['ban', 'lift', '--id', keyId]);
    assert.equal(lift.code, 0, lift.stderr);
    assert.match(lift.stdout, new RegExp(keyId));
    assert.equal(lift.stderr, '');

    // The server learns of a lifting made by another process at its next check, once a second; the
    // bound leaves a loaded machine room for the check's query and this loop's requests.
    assertRefused(await untilNotBanned(app, key, 2500), 'rate_limited');
    clock.advance(MINUTE_MS);
    const accepted = await request(app, '/v1/pets', { key });
    assert.equal(accepted.status, 200, accepted.text);

    const relisted = keyListing(await runCli(app.services.config, ['key', 'list', '--account', account, '--json']));
    assert.deepEqual(
      relisted.map((entry) => [entry.id, entry.bannedUntil]).sort(),
      [
        [keyId, null],
        [spare.record.id, null],
      ].sort(),
    );

    const [again, unknown, ...badRuns] = await Promise.all(
      [
        ['ban', 'lift', '--id', keyId],
        ['ban', 'lift', '--id', 'key_doesnotexist00000'],
        ['ban', 'lift'],
        ['ban', 'lift', '--id'],
        ['ban', 'lift', '--id', keyId, '--account', account],
        ['ban', 'lift', '--id', keyId, 'extra'],
        ['ban', 'lift', '--bogus'],
      ].map((args) => runCli(app.services.config, args).then((run) => ({ args, run }))),
    );
    assert.ok(again && unknown);
    assert.equal(again.run.code, 1, again.run.stderr);
    assert.equal(again.run.stdout, '');
    assert.match(again.run.stderr, /^[^\n]+\n$/, `one line, got ${JSON.stringify(again.run.stderr)}`);
    assert.match(again.run.stderr, /not banned/);

    assert.equal(unknown.run.code, 1, unknown.run.stderr);
    assert.match(unknown.run.stderr, /^[^\n]+\n$/);

    assert.equal(badRuns.length, 5);
    for (const { args, run } of badRuns) {
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^[^\n]+\n$/, `${args.join(' ')}: one line, got ${JSON.stringify(run.stderr)}`);
    }
  });
});

describeEachBackend('rate limits over HTTP: a banned key costs storage nothing', (backend) => {
  it('is refused as banned without a storage lookup until the ban ends, with the key cache off', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({ backend, clock, env: { KEY_CACHE_TTL_MS: '0' } });
    try {
      const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
      const { banned } = await driveToBan(app, key);
      assert.equal(retryAfterOf(banned), 900);
      const keys = app.services.store.keys;
      const findPrincipalByHash = keys.findPrincipalByHash.bind(keys);
      let lookups = 0;
      keys.findPrincipalByHash = (hash: string) => {
        lookups += 1;
        return findPrincipalByHash(hash);
      };
      for (const advance of [0, 1000, MINUTE_MS, 10 * MINUTE_MS]) {
        clock.advance(advance);
        const answers = await requestInSequence(app, '/v1/pets', { key }, 5);
        for (const answer of answers) assertRefused(answer, 'key_banned');
      }
      assert.equal(lookups, 0, 'no request of the banned key reached storage');
      clock.set(MID + 900_000);
      const free = await request(app, '/v1/pets', { key });
      assert.equal(free.status, 200, free.text);
      assert.equal(lookups, 1, 'once the ban is over, the key is read again');
    } finally {
      await app.close();
    }
  });

  it('holds a ban that storage failed to record, and an operator can still lift it', async () => {
    const clock = new ManualClock(MID);
    const app = await startTestApp({ backend, clock, env: { KEY_CACHE_TTL_MS: '0' } });
    try {
      const bans = app.services.store.bans;
      const ban = bans.ban.bind(bans);
      bans.ban = () => Promise.reject(new Error('storage is away'));
      const { key, keyId } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
      const { limited, banned } = await driveToBan(app, key);
      assert.equal(limited, 11);
      assert.equal(retryAfterOf(banned), 900);
      bans.ban = ban;
      assert.equal(await bans.countSince(keyId, 0), 0, 'nothing was recorded');
      clock.advance(MINUTE_MS);
      assertRefused(await request(app, '/v1/pets', { key }), 'key_banned');
      await app.services.accounts.liftBan(keyId);
      const lifted = await request(app, '/v1/pets', { key });
      assert.equal(lifted.status, 200, lifted.text);
    } finally {
      await app.close();
    }
  });
});
