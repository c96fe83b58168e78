import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from 'pg';
import { pino, type Logger } from 'pino';
import { buildServices, createLogger } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { postgresBackend, type Backend } from '../support/backends.ts';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { checkWriteBackRound, createPetsAndCacheReads, postPet } from '../support/storage-outage.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { driveToBan, retryAfterOf, sleep } from '../ratelimit/rate-limit-assertions.ts';

/** PostgreSQL going away under a running instance: 503 within the timeout, /readyz fails, recovery. */
const postgres: Backend = await postgresBackend();
const TIMEOUT_MS = 500;

/** The app on a fresh PostgreSQL database reached through a TCP proxy the test can cut. */
interface ThroughProxy {
  readonly app: TestApp;
  readonly proxy: TcpProxy;
  /** The database's URL straight to PostgreSQL, bypassing the proxy. */
  readonly directUrl: string;
  /** Stops the app and the proxy and drops the database. */
  close(): Promise<void>;
}

/** The app through a proxy (ThroughProxy), with TIMEOUT_MS as its storage timeout. */
async function startThroughProxy(
  options: { readonly env?: Record<string, string>; readonly clock?: ManualClock; readonly logger?: Logger } = {},
): Promise<ThroughProxy> {
  const proxy = await startTcpProxy(5432);
  const directUrl = await postgres.freshDatabaseUrl();
  const env = {
    DATABASE_URL: directUrl.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
    STORAGE_TIMEOUT_MS: String(TIMEOUT_MS),
    ...options.env,
  };
  let app: TestApp;
  try {
    app = await startTestApp({ ...options, env });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  const close = async (): Promise<void> => {
    await app.close();
    await proxy.close();
    await postgres.cleanup();
  };
  return { app, proxy, directUrl, close };
}

describe('PostgreSQL unreachable', { skip: postgres.skip }, () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let headers: Record<string, string>;
  let close: () => Promise<void>;

  before(async () => {
    ({ app, proxy, close } = await startThroughProxy({ env: { KEY_CACHE_TTL_MS: '0' } }));
    const { key } = await app.newKey({ plan: 'business' });
    headers = { authorization: `Bearer ${key}` };
  });
  after(() => close());

  async function expectUnavailable(): Promise<void> {
    const started = performance.now();
    const response = await request(app, '/v1/pets', { headers });
    const elapsed = performance.now() - started;
    assert.equal(response.status, 503);
    const body = response.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
    assert.equal(body.code, 'service_unavailable');
    assert.ok(elapsed < TIMEOUT_MS * 3 + 500, `answered after ${Math.round(elapsed)} ms`);
    assert.equal((await request(app, '/readyz')).status, 503);
  }

  async function expectRecovered(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await request(app, '/v1/pets', { headers });
      if (response.status === 200) break;
      assert.ok(Date.now() < deadline, `still ${response.status} after PostgreSQL came back`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await request(app, '/readyz')).status, 200);
  }

  test('refused connections: 503 service_unavailable at once, then recovery by itself', async () => {
    assert.equal((await request(app, '/v1/pets', { headers })).status, 200);
    await proxy.refuse();
    await expectUnavailable();
    proxy.forward();
    await expectRecovered();
  });

  test('a silent network: 503 within the storage timeout, never a hang, then recovery', async () => {
    proxy.blackhole();
    await expectUnavailable();
    proxy.forward();
    await expectRecovered();
  });
});

describe('PostgreSQL unreachable: what needs no storage', { skip: postgres.skip }, () => {
  /** A cached answer takes milliseconds; this is far above the noise, and below the key cache's 1 s. */
  const READ_BOUND_MS = 500;
  const WRITE_MARGIN_MS = 250;
  const START = Date.parse('2026-06-01T12:00:00Z');
  const clock = new ManualClock(START);
  let started: ThroughProxy;
  let headers: Record<string, string>;
  let ids: number[];

  before(async () => {
    started = await startThroughProxy({ clock, env: { KEY_CACHE_TTL_MS: '1000' } });
    headers = { authorization: `Bearer ${(await started.app.newKey({ plan: 'business' })).key}` };
    ids = await createPetsAndCacheReads(started.app, headers, 3, 'sold');
  });
  after(() => started.close());

  test('a silent network: cached reads and keys answer at once, creations get 503 in time', async () => {
    const { app, proxy } = started;
    const usedAt = START + 60_000;
    clock.set(usedAt);
    // A key looked up just now: its cached verdict holds for KEY_CACHE_TTL_MS, longer than this test's requests.
    const fresh = await app.newKey({ plan: 'business' });
    const freshHeaders = { authorization: `Bearer ${fresh.key}` };
    assert.equal((await request(app, '/v1/usage', { headers: freshHeaders })).status, 200);

    proxy.blackhole();
    try {
      const post = (idempotencyKey?: string): Promise<HttpAnswer> =>
        postPet(app, freshHeaders, { name: 'during', status: 'sold', idempotencyKey });
      // Reads, creations and the last-used write-back (as its timer starts it) during the outage.
      await checkWriteBackRound(app, {
        headers: freshHeaders,
        reads: { cachedPage: '/v1/pets?limit=2', cachedPet: `/v1/pets/${ids[0]}`, usage: '/v1/usage' },
        writes: { plain: () => post(), idempotent: () => post(randomUUID()) },
        limits: {
          readMs: READ_BOUND_MS,
          writeMs: TIMEOUT_MS + WRITE_MARGIN_MS,
          writeBackMs: TIMEOUT_MS + WRITE_MARGIN_MS,
        },
        whileOut: 'while PostgreSQL was unreachable',
      });
    } finally {
      proxy.forward();
    }

    // Back: the batch the outage kept is written by the next write-back.
    const deadline = Date.now() + 10_000;
    while ((await request(app, '/v1/pets', { headers })).status !== 200) {
      assert.ok(Date.now() < deadline, 'still unavailable after PostgreSQL came back');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await app.services.keyVerifier.flushLastUsed();
    assert.equal((await app.services.store.keys.findById(fresh.keyId))?.lastUsedAt, usedAt);
  });
});

describe('PostgreSQL unreachable: the log', { skip: postgres.skip }, () => {
  test('50 requests during an outage give one warning line, with the cause and no stack', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const { app, proxy, close } = await startThroughProxy({ env: { KEY_CACHE_TTL_MS: '0' }, logger });
    try {
      const { key } = await app.newKey({ plan: 'business' });
      await proxy.refuse();
      for (let i = 0; i < 50; i += 1) {
        assert.equal((await request(app, '/v1/pets', { key })).status, 503);
      }
      const deadline = Date.now() + 5000;
      while (lines.filter((line) => line.includes('"msg":"request"')).length < 50) {
        assert.ok(Date.now() < deadline, 'the access lines of the 50 requests');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const warnings = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; cause?: string; suppressed?: number })
        .filter((line) => line.level >= 40 && line.msg.startsWith('storage unavailable'));
      assert.ok(
        warnings.length >= 1 && warnings.length <= 2,
        `${warnings.length} warning lines:\n${JSON.stringify(warnings)}`,
      );
      for (const line of lines) assert.doesNotMatch(line, /"stack"|\\n\s+at /, `a stack in the log: ${line}`);
      const [first] = warnings;
      assert.match(first?.msg ?? '', /^storage unavailable/);
      assert.equal(first?.suppressed, 0);
      assert.ok(first?.cause, `the first warning says what failed: ${JSON.stringify(first)}`);
    } finally {
      await close();
    }
  });
});

describe('PostgreSQL closing an idle pooled connection', { skip: postgres.skip }, () => {
  test('is logged as a warning, and the next query opens a new connection', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const databaseUrl = await postgres.freshDatabaseUrl();
    const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', DEMO_BOOTSTRAP: 'false' });
    const services = await buildServices(config, { logger });
    try {
      await services.store.migrate();
      await services.store.ping();
      await postgres.execute(
        databaseUrl,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'petstore' AND state = 'idle' AND pid <> pg_backend_pid()`,
      );
      const deadline = Date.now() + 5000;
      while (!lines.some((line) => line.includes('PostgreSQL closed an idle connection'))) {
        assert.ok(Date.now() < deadline, `no warning logged; lines: ${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const warning = JSON.parse(lines.find((line) => line.includes('idle connection')) ?? '{}') as { level: number };
      assert.equal(warning.level, 40);
      await services.store.ping();
    } finally {
      await services.close();
      await postgres.cleanup();
    }
  });
});

describe('PostgreSQL partition during a creation with an Idempotency-Key', { skip: postgres.skip }, () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let close: () => Promise<void>;
  let headers: Record<string, string>;
  /** A session of the test's own, straight to PostgreSQL, to hold locks and watch the app's sessions. */
  let observer: Client;

  before(async () => {
    let directUrl: string;
    ({ app, proxy, directUrl, close } = await startThroughProxy());
    headers = { authorization: `Bearer ${(await app.newKey({ plan: 'business' })).key}` };
    observer = new Client({ connectionString: directUrl });
    await observer.connect();
  });

  after(async () => {
    await observer.end();
    await close();
  });

  const create = (name: string, key: string): Promise<HttpAnswer> =>
    request(app, '/v1/pets', {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': key },
      json: { name, categoryId: 3, status: 'pending' },
    });

  async function expectUnavailableWithin(response: Promise<HttpAnswer>, started: number): Promise<void> {
    const answered = await response;
    const elapsed = performance.now() - started;
    assert.equal(answered.status, 503);
    assert.equal(answered.json<{ code: string }>().code, 'service_unavailable');
    assert.ok(elapsed < TIMEOUT_MS + 400, `503 after ${Math.round(elapsed)} ms`);
  }

  /** Retries like a client after a 503: until storage answers; then the answer must be a 201. */
  async function retryUntilAnswered(name: string, key: string): Promise<HttpAnswer> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await create(name, key);
      if (response.status !== 503) return response;
      assert.ok(Date.now() < deadline, 'still 503 after PostgreSQL came back');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function petsNamed(name: string): Promise<number> {
    const response = await request(app, '/v1/pets?limit=100', { headers });
    assert.equal(response.status, 200);
    return response.json<{ name: string }[]>().filter((pet) => pet.name === name).length;
  }

  const PETS_LOCK = `hashtextextended('petstore:pets:' || coalesce(current_schema(), ''), 0)`;

  test('cut before the commit: 503 at once, and the retry after recovery creates the pet once (no 409)', async () => {
    const name = `cut-${randomUUID()}`;
    const key = randomUUID();
    // Creations wait for the pets lock, so the request is surely in the middle of its work when the network goes.
    await observer.query(`SELECT pg_advisory_lock(${PETS_LOCK})`);
    const started = performance.now();
    const first = create(name, key);
    await new Promise((resolve) => setTimeout(resolve, 150));
    proxy.blackhole();
    await expectUnavailableWithin(first, started);
    proxy.forward();
    await observer.query(`SELECT pg_advisory_unlock(${PETS_LOCK})`);
    // The server ends the cut session's statement by statement_timeout at the latest.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS));

    const retried = await retryUntilAnswered(name, key);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    const again = await create(name, key);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, retried.text);
    assert.equal(await petsNamed(name), 1);
  });

  test('cut while the commit is under way: the 503 is answered, and the retry replays the committed pet', async () => {
    const name = `lost-${randomUUID()}`;
    const key = randomUUID();
    // A deferred trigger makes the commit last long enough to cut the network during it.
    await observer.query(`
      CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON idempotency_keys
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();`);
    try {
      const started = performance.now();
      const first = create(name, key);
      const deadline = Date.now() + 5000;
      for (;;) {
        const { rows } = await observer.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query ILIKE 'commit%'
             AND datname = current_database() AND application_name = 'petstore'`,
        );
        if (rows.length > 0) break;
        assert.ok(Date.now() < deadline, 'the commit never started');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      proxy.blackhole();
      await expectUnavailableWithin(first, started);
      proxy.forward();
    } finally {
      await observer.query('DROP TRIGGER slow_commit ON idempotency_keys; DROP FUNCTION slow_commit();');
    }

    const retried = await retryUntilAnswered(name, key);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), 'true', 'the first request did commit');
    assert.equal(await petsNamed(name), 1);
  });
});

describe('PostgreSQL unreachable: a banned key', { skip: postgres.skip }, () => {
  for (const limiter of ['memory', 'Redis'] as const) {
    test(`gets 429 key_banned for every request, at once, during a silent network (${limiter} limiter)`, async (t) => {
      const redis = limiter === 'Redis' ? await redisBackend() : undefined;
      if (redis?.skip !== undefined) {
        t.skip(redis.skip);
        return;
      }
      const env: Record<string, string> =
        redis === undefined ? {} : { REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() };
      const { app, proxy, close } = await startThroughProxy({ env });
      try {
        const { key } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
        const { banned } = await driveToBan(app, key);
        assert.equal(retryAfterOf(banned), 900);
        proxy.blackhole();
        // 40 requests over 2 s: twice past the key cache's second, and the lifting checks' too.
        for (let i = 0; i < 40; i += 1) {
          const started = performance.now();
          const answer = await request(app, '/v1/pets', { key });
          const elapsed = performance.now() - started;
          assert.equal(answer.status, 429, `request ${i}: ${answer.status} ${answer.text}`);
          assert.equal(errorOf(answer).code, 'key_banned');
          assert.equal(retryAfterOf(answer), 900);
          assert.ok(elapsed < TIMEOUT_MS / 2, `request ${i} waited ${Math.round(elapsed)} ms: it asked storage`);
          await sleep(50);
        }
        assert.equal((await request(app, '/readyz')).status, 503, 'storage was unreachable all along');
      } finally {
        proxy.forward();
        await close();
        await redis?.cleanup();
      }
    });
  }
});
