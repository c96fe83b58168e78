import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { lastSeenEveryMs, OperatorSessionService } from '../../src/auth/operator-sessions.ts';
import { loadConfig } from '../../src/config.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { operatorAppForSuite } from './operator-app.ts';

/**
 * The console's sessions (docs/operations.md, "Console"): the cookie holds a session id, stored
 * hashed; a session ends on logout, after OPERATOR_SESSION_IDLE_MINUTES without a request, at
 * OPERATOR_SESSION_MAX_HOURS after its login, and when its token is revoked. A cookie replayed after
 * any of these gets 401. The clock is moved by hand; every check reads storage, on both backends.
 */

const START = Date.UTC(2026, 5, 1, 12);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The stored key of a session: the SHA-256 of the id in the cookie. */
function hashOfCookie(cookie: string): string {
  return createHash('sha256').update(cookie.slice('petstore_operator='.length)).digest('base64url');
}

describeEachBackend('console sessions', (backend) => {
  const clock = new ManualClock(START);
  const app = operatorAppForSuite({ backend, clock, authFailuresPerMinute: 1000 });

  const status = (cookie: string): Promise<HttpAnswer> =>
    request(app.operator, '/admin/v1/status', { headers: { cookie } });

  function assertRefused(answer: HttpAnswer, what: string): void {
    assertError(answer, 401, 'unauthorized');
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer realm="petstore-operator"', what);
  }

  it('stores the session by the hash of its id, never the id, with its token and times', async () => {
    clock.set(START);
    const cookie = await app.logIn();
    const stored = await app.publicApp.services.store.operatorSessions.find(hashOfCookie(cookie));
    assert.ok(stored, 'found by the hash of the id');
    assert.equal(stored.startedAt, START);
    assert.equal(stored.lastSeenAt, START);
    assert.equal(stored.endedAt, null);
    assert.equal(stored.token.id, app.token.slice(4, 20));
    const id = cookie.slice('petstore_operator='.length);
    assert.equal(await app.publicApp.services.store.operatorSessions.find(id), undefined, 'not by the id itself');
  });

  it("a use through a session is a use of its token: the token's last use follows", async () => {
    clock.set(START);
    const { token, record } = await app.tokens.create('used through a session');
    const cookie = await app.logIn(token);
    clock.set(START + 2 * MINUTE);
    assert.equal((await status(cookie)).status, 200);
    // Written in the background, as every last use.
    const deadline = Date.now() + 3000;
    let lastUsedAt: number | null | undefined;
    while (lastUsedAt !== START + 2 * MINUTE && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      lastUsedAt = (await app.publicApp.services.store.operatorTokens.findById(record.id))?.lastUsedAt;
    }
    assert.equal(lastUsedAt, START + 2 * MINUTE);
  });

  it('a cookie replayed after logout gets 401, on every path, and the session records its end', async () => {
    clock.set(START);
    const cookie = await app.logIn();
    assert.equal((await status(cookie)).status, 200);
    clock.advance(5 * MINUTE);
    const logout = await request(app.operator, '/admin/v1/session', {
      method: 'DELETE',
      headers: { cookie, origin: app.listener.url },
    });
    assert.equal(logout.status, 204);
    assertRefused(await status(cookie), 'status');
    assertRefused(await request(app.operator, '/console/accounts', { headers: { cookie } }), 'a console page');
    const changed = await request(app.operator, '/admin/v1/accounts', {
      method: 'POST',
      json: { name: 'after-logout', plan: 'free' },
      headers: { cookie, origin: app.listener.url },
    });
    assertRefused(changed, 'a change');
    const stored = await app.publicApp.services.store.operatorSessions.find(hashOfCookie(cookie));
    assert.equal(stored?.endedAt, START + 5 * MINUTE);
    // Another session of the same token is not ended by it.
    const other = await app.logIn();
    assert.equal((await status(other)).status, 200);
  });

  it('ends after 30 minutes without a request; the last use is written at most once a minute', async () => {
    clock.set(START);
    const cookie = await app.logIn();
    const stored = () => app.publicApp.services.store.operatorSessions.find(hashOfCookie(cookie));
    clock.advance(MINUTE / 2);
    assert.equal((await status(cookie)).status, 200);
    // Within the minute, the use is not written…
    assert.equal((await stored())?.lastSeenAt, START);
    // …but the instance that answered it counts the idle time from it, not from the login.
    const lastUse = START + MINUTE / 2 + 30 * MINUTE - 1;
    clock.set(lastUse);
    assert.equal((await status(cookie)).status, 200);
    assert.equal((await stored())?.lastSeenAt, lastUse, 'over a minute since the last one stored: written');
    clock.advance(30 * MINUTE);
    assertRefused(await status(cookie), 'idle for 30 minutes');
    // Refused for good: coming back later does not revive it.
    clock.advance(-MINUTE);
    assertRefused(await status(cookie), 'once over');
    assert.equal((await stored())?.endedAt, lastUse + 30 * MINUTE, 'ended when its idle time was up');
  });

  it('ends 12 hours after its login, however busy', async () => {
    clock.set(START);
    const cookie = await app.logIn();
    for (let at = 10 * MINUTE; at < 12 * HOUR; at += 10 * MINUTE) {
      clock.set(START + at);
      assert.equal((await status(cookie)).status, 200, `at ${at / MINUTE} min`);
    }
    clock.set(START + 12 * HOUR - 1);
    assert.equal((await status(cookie)).status, 200);
    clock.set(START + 12 * HOUR);
    assertRefused(await status(cookie), 'after 12 hours');
    const stored = await app.publicApp.services.store.operatorSessions.find(hashOfCookie(cookie));
    assert.equal(stored?.endedAt, START + 12 * HOUR);
  });

  it('ends at once when its token is revoked, by the admin API or elsewhere, with its siblings', async () => {
    clock.set(START);
    for (const revoke of ['api', 'cli'] as const) {
      const { token, record } = await app.tokens.create(`revoked by ${revoke}`);
      const [first, second] = [await app.logIn(token), await app.logIn(token)];
      const bystander = await app.logIn();
      assert.equal((await status(first)).status, 200);
      if (revoke === 'api') {
        const answer = await request(app.operator, `/admin/v1/operator-tokens/${record.id}/revoke`, {
          method: 'POST',
          key: app.token,
        });
        assert.equal(answer.status, 200, answer.text);
      } else {
        // As `petstore operator token revoke` does, from another process over the same store.
        await app.tokens.revoke(record.id);
      }
      assertRefused(await status(first), `${revoke}: first session`);
      assertRefused(await status(second), `${revoke}: second session`);
      assert.equal((await status(bystander)).status, 200, "another token's session goes on");
      const stored = await app.publicApp.services.store.operatorSessions.find(hashOfCookie(second));
      assert.equal(stored?.endedAt, START, `${revoke}: the revocation ended it`);
    }
  });

  it('a session whose token was revoked without ending it is refused all the same', async () => {
    clock.set(START);
    const { token, record } = await app.tokens.create('revoked in storage only');
    const cookie = await app.logIn(token);
    // The token's revocation alone, as if ending its sessions had failed: each use reads it.
    await app.publicApp.services.store.operatorTokens.revoke(record.id, START);
    assertRefused(await status(cookie), 'revoked token');
  });

  it('a browser opening a console page with a session that ended is sent to log in', async () => {
    clock.set(START);
    const cookie = await app.logIn();
    clock.advance(31 * MINUTE);
    const answer = await request(app.operator, '/console/accounts', {
      headers: { cookie, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' },
    });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), '/console/login?next=%2Fconsole%2Faccounts');
  });

  it('sessions over for a day are deleted at the next login', async () => {
    const logOut = (cookie: string) =>
      request(app.operator, '/admin/v1/session', { method: 'DELETE', headers: { cookie, origin: app.listener.url } });
    clock.set(START);
    const ended = await app.logIn();
    await logOut(ended);
    const idle = await app.logIn();
    clock.set(START + 2 * HOUR);
    const recent = await app.logIn();
    await logOut(recent);
    clock.set(START + 24 * HOUR + 31 * MINUTE);
    await app.logIn();
    const sessions = app.publicApp.services.store.operatorSessions;
    assert.equal(await sessions.find(hashOfCookie(ended)), undefined, 'ended a day ago');
    assert.equal(await sessions.find(hashOfCookie(idle)), undefined, 'idle for a day');
    assert.ok(await sessions.find(hashOfCookie(recent)), 'over for less than a day: kept');
  });
});

describeEachBackend('console sessions: settings and failed attempts', (backend) => {
  const clock = new ManualClock(START);
  const app = operatorAppForSuite({
    backend,
    clock,
    authFailuresPerMinute: 3,
    env: { OPERATOR_SESSION_IDLE_MINUTES: '5', OPERATOR_SESSION_MAX_HOURS: '1' },
  });

  const status = (cookie: string): Promise<HttpAnswer> =>
    request(app.operator, '/admin/v1/status', { headers: { cookie } });

  it('OPERATOR_SESSION_IDLE_MINUTES and OPERATOR_SESSION_MAX_HOURS set the times', async () => {
    clock.set(START);
    const idle = await app.logIn();
    const busy = await app.logIn();
    clock.set(START + 4 * MINUTE);
    assert.equal((await status(busy)).status, 200);
    clock.set(START + 5 * MINUTE);
    assertError(await status(idle), 401, 'unauthorized');
    for (let at = 8 * MINUTE; at < HOUR; at += 4 * MINUTE) {
      clock.set(START + at);
      assert.equal((await status(busy)).status, 200, `at ${at / MINUTE} min`);
    }
    clock.set(START + HOUR - 1);
    assert.equal((await status(busy)).status, 200);
    clock.set(START + HOUR);
    assertError(await status(busy), 401, 'unauthorized');
  });

  it('a cookie of a session that ended is no failed attempt; a cookie no session had is one', async () => {
    clock.set(START + 2 * HOUR);
    const cookie = await app.logIn();
    await request(app.operator, '/admin/v1/session', {
      method: 'DELETE',
      headers: { cookie, origin: app.listener.url },
    });
    for (let i = 0; i < 5; i += 1) assertError(await status(cookie), 401, 'unauthorized');
    assert.equal((await request(app.operator, '/admin/v1/status', { key: app.token })).status, 200, 'not limited');
    const guessed = `petstore_operator=${'A'.repeat(43)}`;
    for (let i = 0; i < 3; i += 1) assertError(await status(guessed), 401, 'unauthorized');
    assertError(await request(app.operator, '/admin/v1/status', { key: app.token }), 429, 'rate_limited');
    clock.advance(MINUTE);
  });
});

describeEachBackend('console sessions at the smallest idle time, one minute', (backend) => {
  const clock = new ManualClock(START);
  const app = operatorAppForSuite({ backend, clock, env: { OPERATOR_SESSION_IDLE_MINUTES: '1' } });
  const IDLE = MINUTE;

  const status = (cookie: string): Promise<HttpAnswer> =>
    request(app.operator, '/admin/v1/status', { headers: { cookie } });
  const stored = (cookie: string) => app.publicApp.services.store.operatorSessions.find(hashOfCookie(cookie));

  /** Uses each session every `every` ms from `from` up to and including `until`. */
  async function useEvery(cookies: readonly string[], every: number, from: number, until: number): Promise<void> {
    for (let at = from; at <= until; at += every) {
      clock.set(at);
      for (const cookie of cookies) assert.equal((await status(cookie)).status, 200, `at ${(at - START) / 1000} s`);
    }
  }

  it('a session used every quarter of it stays open past a minute, and ends a minute after its last use', async () => {
    clock.set(START);
    const [kept, left] = [await app.logIn(), await app.logIn()];
    const lastUse = START + 5 * MINUTE;
    await useEvery([kept, left], IDLE / 4, START + IDLE / 4, lastUse);
    // Written at each use, so every instance sees it.
    assert.equal((await stored(kept))?.lastSeenAt, lastUse);
    clock.set(lastUse + IDLE - 1);
    assert.equal((await status(kept)).status, 200, 'a moment before its idle time is up');
    clock.set(lastUse + IDLE);
    assertError(await status(left), 401, 'unauthorized');
    assert.equal((await stored(left))?.endedAt, lastUse + IDLE);
  });

  it('used more often, it ends a minute after the last use the instance answered, though not yet written', async () => {
    assert.equal(lastSeenEveryMs(IDLE), 15_000, 'written at most every quarter of the idle time');
    clock.set(START + HOUR);
    const [kept, left, elsewhere] = [await app.logIn(), await app.logIn(), await app.logIn()];
    // Every 10 s: a use is written only when 15 s have passed since the last one stored.
    const lastUse = START + HOUR + 3 * MINUTE + 10_000;
    await useEvery([kept, left, elsewhere], 10_000, START + HOUR + 10_000, lastUse);
    assert.equal((await stored(kept))?.lastSeenAt, lastUse - 10_000, 'the last use is not written yet');
    clock.set(lastUse + IDLE - 1);
    assert.equal((await status(kept)).status, 200, 'counted from the last use, not from the one stored');
    clock.set(lastUse + IDLE);
    assertError(await status(left), 401, 'unauthorized');
    // Another instance knows only the stored time: there a session ends up to a quarter of its idle time sooner.
    const other = new OperatorSessionService(app.publicApp.services.store.operatorSessions, clock, {
      idleMs: IDLE,
      maxMs: HOUR,
    });
    clock.set(lastUse - 10_000 + IDLE);
    assert.deepEqual(await other.verify(elsewhere.slice('petstore_operator='.length)), { ok: false, reason: 'idle' });
    assert.equal((await stored(elsewhere))?.endedAt, lastUse - 10_000 + IDLE, '10 s sooner than on this instance');
  });
});

describe('the session settings', () => {
  it('OPERATOR_SESSION_IDLE_MINUTES and _MAX_HOURS: 30 minutes and 12 hours unless set, validated', () => {
    assert.deepEqual(loadConfig({}).operatorSession, { idleMs: 30 * 60_000, maxMs: 12 * 3_600_000 });
    assert.deepEqual(
      loadConfig({ OPERATOR_SESSION_IDLE_MINUTES: '5', OPERATOR_SESSION_MAX_HOURS: '1' }).operatorSession,
      { idleMs: 5 * 60_000, maxMs: 3_600_000 },
    );
    for (const [name, value] of [
      ['OPERATOR_SESSION_IDLE_MINUTES', '0'],
      ['OPERATOR_SESSION_IDLE_MINUTES', 'soon'],
      ['OPERATOR_SESSION_IDLE_MINUTES', '1441'],
      ['OPERATOR_SESSION_MAX_HOURS', '0'],
      ['OPERATOR_SESSION_MAX_HOURS', '721'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        new RegExp(`invalid configuration: ${name}`),
        `${name}=${value}`,
      );
    }
    assert.throws(
      () => loadConfig({ OPERATOR_SESSION_IDLE_MINUTES: '120', OPERATOR_SESSION_MAX_HOURS: '1' }),
      /OPERATOR_SESSION_IDLE_MINUTES must not exceed OPERATOR_SESSION_MAX_HOURS/,
    );
  });
});
