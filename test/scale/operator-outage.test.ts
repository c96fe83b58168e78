import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it, type TestContext } from 'node:test';
import { OUTAGE_TRUST_MS } from '../../src/operator/remembered-verifications.ts';
import { postgresBackend, type Backend } from '../support/backends.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request, type ErrorBody, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { holdWriteLock } from '../support/sqlite-write-lock.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startOperatorTestApp, type OperatorTestApp } from '../operator/operator-app.ts';

/**
 * The operator listener while storage does not answer: the status and the console's overview stay
 * open to a token or session verified in the last minutes, with what is known; nothing else passes
 * on that memory; /metrics answers from the last readiness probe, never waiting for one.
 *
 * On PostgreSQL the proxy in front of it stops passing bytes (`silence`): every query hangs until
 * STORAGE_TIMEOUT_MS. On SQLite another process holds the file's write lock: writes hang, while
 * reads (token and session lookups, the counts) still answer, in WAL mode, so storage still decides.
 */
const TIMEOUT_MS = 1500;
/**
 * Generous bounds for a loaded 2-core machine, and below the storage timeout: the point is that
 * nothing waits for storage (a scrape that probed would take TIMEOUT_MS). /metrics aims at 100 ms.
 */
const METRICS_BOUND_MS = 1000;
const STATUS_BOUND_MS = 1000;
/** The lock outlives the test; it is ended by killing its process. */
const LOCK_HELD_MS = 120_000;

interface Outage {
  /** Whether storage still answers reads (SQLite's write lock) or nothing at all (PostgreSQL). */
  readonly readsAnswer: boolean;
  begin(): Promise<void>;
  end(): Promise<void>;
  close(): Promise<void>;
}

interface Timed {
  readonly response: HttpAnswer;
  readonly ms: number;
}

async function timed(answer: Promise<HttpAnswer>): Promise<Timed> {
  const started = performance.now();
  const response = await answer;
  return { response, ms: performance.now() - started };
}

interface Status {
  readonly storage: { readonly backend: string; readonly ready: boolean };
  readonly redis: { readonly ready: boolean } | null;
  readonly accounts: number | null;
  readonly activeBans: number | null;
  readonly checkedAt: string;
  readonly countsUnavailable: string | null;
}

describeEachBackend('The operator listener while storage does not answer', (backend) => {
  const START = Date.parse('2026-06-01T12:00:00Z');
  let directory: string;
  let postgres: Backend | undefined;
  let outage: Outage;
  let app: OperatorTestApp;
  let clock: ManualClock;
  let cookie: string;
  /** A valid token this instance has never verified. */
  let unverified: string;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-operator-outage-'));
    clock = new ManualClock(START);
    const env: Record<string, string> = { STORAGE_TIMEOUT_MS: String(TIMEOUT_MS) };
    if (backend.name === 'postgres') {
      postgres = await postgresBackend();
      const proxy = await startTcpProxy(5432);
      env.DATABASE_URL = (await postgres.freshDatabaseUrl()).replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
      outage = proxyOutage(proxy);
    } else {
      const path = join(directory, 'petstore.db');
      env.DATABASE_URL = `sqlite:${path}`;
      outage = lockOutage(path);
    }
    app = await startOperatorTestApp({ backend, clock, env });
    unverified = (await app.tokens.create('never used here')).token;
    // Verified by storage, so remembered: the token by a status request, the session by the overview.
    assert.equal((await status(app.token)).status, 200);
    cookie = await app.logIn();
    assert.equal((await overview(cookie)).status, 200);
  });

  after(async () => {
    await outage.end();
    await app.close();
    await outage.close();
    await postgres?.cleanup();
    rmSync(directory, { recursive: true, force: true });
  });

  const status = (token: string, options: HttpRequest = {}): Promise<HttpAnswer> =>
    request(app.operator, '/admin/v1/status', { key: token, ...options });
  const overview = (session: string): Promise<HttpAnswer> =>
    request(app.operator, '/console', { headers: { cookie: session, accept: 'text/html' } });
  const withCookie = (path: string): Promise<HttpAnswer> => request(app.operator, path, { headers: { cookie } });

  /** Until the readiness metric says what storage does; scrapes start probes when the reading is 1 s old. */
  async function untilStorageUp(up: 0 | 1): Promise<void> {
    const deadline = Date.now() + 15_000;
    const name = backend.name === 'postgres' ? 'postgres' : 'sqlite';
    for (;;) {
      const metrics = await request({ url: app.listener.url, servesApi: false }, '/metrics');
      if (new RegExp(`^petstore_dependency_up\\{dependency="${name}"\\} ${up}$`, 'm').test(metrics.text)) return;
      assert.ok(Date.now() < deadline, `petstore_dependency_up never became ${up}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('the status, the overview and /metrics answer at once, with what is known', async (t: TestContext) => {
    await outage.begin();
    try {
      if (!outage.readsAnswer) await untilStorageUp(0);
      const figures: Record<string, number> = {};
      for (let round = 0; round < 3; round += 1) {
        // Past the metrics' render interval, so that each round renders the text again.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const [metrics, byToken, bySession, page] = await Promise.all([
          timed(request({ url: app.listener.url, servesApi: false }, '/metrics')),
          timed(status(app.token)),
          timed(withCookie('/admin/v1/status')),
          timed(overview(cookie)),
        ]);
        assert.equal(metrics.response.status, 200);
        assert.ok(metrics.ms < METRICS_BOUND_MS, `/metrics took ${Math.round(metrics.ms)} ms`);
        for (const [name, answer] of Object.entries({ byToken, bySession, page })) {
          assert.equal(answer.response.status, 200, `${name}: ${answer.response.text}`);
          assert.ok(answer.ms < STATUS_BOUND_MS, `${name} took ${Math.round(answer.ms)} ms`);
        }
        for (const [name, answer] of Object.entries({ metrics, byToken, bySession, page }))
          figures[name] = Math.max(figures[name] ?? 0, Math.round(answer.ms));
        assertStatus(byToken.response.json<Status>());
        assertStatus(bySession.response.json<Status>());
      }
      // The overview's own files load too: the same for every operator.
      const page = (await overview(cookie)).text;
      const script = /<script type="module" src="(\/console\/assets\/[^"]+)"/.exec(page)?.[1];
      assert.ok(script, 'the overview links its script');
      assert.equal((await withCookie(script)).status, 200);
      t.diagnostic(`${backend.name}: slowest of 3 rounds (ms): ${JSON.stringify(figures)}`);
    } finally {
      await outage.end();
    }
  });

  function assertStatus(shown: Status): void {
    assert.equal(shown.storage.ready, outage.readsAnswer);
    assert.deepEqual(shown.redis, backend.name === 'postgres' ? { ready: true } : null);
    if (outage.readsAnswer) {
      // SQLite's readers are not held by the write lock: storage answers, and counts.
      assert.equal(typeof shown.accounts, 'number');
      assert.equal(shown.countsUnavailable, null);
      return;
    }
    assert.equal(shown.accounts, null);
    assert.equal(shown.activeBans, null);
    assert.match(
      shown.countsUnavailable ?? '',
      new RegExp(`^storage did not answer its last probe \\(at .+\\) within ${TIMEOUT_MS} ms; `),
    );
  }

  it('nothing else passes on a remembered verification, nor a token storage never accepted here', async () => {
    await outage.begin();
    try {
      if (!outage.readsAnswer) await untilStorageUp(0);
      const changes = [
        request(app.operator, '/admin/v1/accounts', {
          method: 'POST',
          key: app.token,
          json: { name: `outage-${backend.name}`, plan: 'free' },
        }),
        request(app.operator, '/admin/v1/accounts', {
          method: 'POST',
          headers: { cookie, origin: app.listener.url },
          json: { name: `outage-${backend.name}-console`, plan: 'free' },
        }),
      ];
      // Whether the lookup or the write fails, a change never happens without storage.
      for (const change of await Promise.all(changes)) assertUnavailable(change);
      if (outage.readsAnswer) {
        // Storage still decides: a token it knows opens the status, one it does not is refused.
        assert.equal((await status(unverified)).status, 200);
        assert.equal((await status('pso_0000000000000000_00000000000000000000000000000000')).status, 401);
        return;
      }
      // Other reads need storage themselves: the memory does not open them.
      const accounts = await request(app.operator, '/admin/v1/accounts', { key: app.token });
      assertUnavailable(accounts, /storage does not answer, so the operator token cannot be checked; retry/);
      const unknown = await status(unverified);
      assertUnavailable(unknown, /has not verified it in the last 5 minutes/);
      const guessed = await status('pso_0000000000000000_00000000000000000000000000000000');
      assertUnavailable(guessed, /has not verified it in the last 5 minutes/);
      // The bound: trusted for OUTAGE_TRUST_MS after storage last verified it, then no more.
      clock.advance(OUTAGE_TRUST_MS - 1000);
      assert.equal((await status(app.token)).status, 200);
      assert.equal((await withCookie('/admin/v1/status')).status, 200);
      clock.advance(1000);
      assertUnavailable(await status(app.token), /has not verified it in the last 5 minutes/);
      assertUnavailable(await withCookie('/admin/v1/status'), /the console session cannot be checked/);
    } finally {
      await outage.end();
    }
    await untilStorageUp(1);
    // Storage answers again: it verifies, and the status counts.
    const shown = (await status(app.token)).json<Status>();
    assert.equal(shown.storage.ready, true);
    assert.equal(typeof shown.accounts, 'number');
  });

  it('a token revoked or a session logged out while storage answers opens nothing in a later outage', async () => {
    const { token, record } = await app.tokens.create('revoked');
    assert.equal((await status(token)).status, 200);
    const loggedOut = await app.logIn();
    assert.equal((await overview(loggedOut)).status, 200);
    await app.tokens.revoke(record.id);
    assert.equal((await status(token)).status, 401, 'refused as soon as storage answers');
    const logout = await request(app.operator, '/admin/v1/session', {
      method: 'DELETE',
      headers: { cookie: loggedOut, origin: app.listener.url },
    });
    assert.equal(logout.status, 204, logout.text);
    await outage.begin();
    try {
      if (!outage.readsAnswer) await untilStorageUp(0);
      const [byToken, bySession] = await Promise.all([
        status(token),
        request(app.operator, '/admin/v1/status', { headers: { cookie: loggedOut } }),
      ]);
      if (outage.readsAnswer) {
        assert.equal(byToken.status, 401);
        assert.equal(bySession.status, 401);
      } else {
        assertUnavailable(byToken, /the operator token cannot be checked, and this instance has not verified it/);
        assertUnavailable(bySession, /the console session cannot be checked, and this instance has not verified it/);
      }
    } finally {
      await outage.end();
    }
  });
});

function assertUnavailable(answer: HttpAnswer, message?: RegExp): void {
  assert.equal(answer.status, 503, answer.text);
  const body = answer.json<ErrorBody>();
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
  assert.equal(body.code, 'service_unavailable');
  if (message !== undefined) assert.match(body.message, message);
}

function proxyOutage(proxy: TcpProxy): Outage {
  return {
    readsAnswer: false,
    begin: async () => proxy.silence(),
    end: async () => proxy.forward(),
    close: () => proxy.close(),
  };
}

function lockOutage(path: string): Outage {
  let locker: ChildProcess | undefined;
  return {
    readsAnswer: true,
    async begin() {
      locker = await holdWriteLock(path, LOCK_HELD_MS);
    },
    async end() {
      if (locker === undefined) return;
      const exited = once(locker, 'exit');
      locker.kill();
      await exited;
      locker = undefined;
    },
    close: async () => undefined,
  };
}
