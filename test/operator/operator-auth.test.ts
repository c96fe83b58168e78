import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, describe, it } from 'node:test';
import { createLogger } from '../../src/composition-root.ts';
import { REDACTED_OPERATOR_TOKEN, redactKeys } from '../../src/http/redact.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { operatorAppForSuite, startOperatorTestApp } from './operator-app.ts';

/**
 * Who may use the operator listener (docs/operations.md, "Operator listener"): every path of the
 * admin API and the console needs a valid operator token, in `Authorization: Bearer` or in the
 * console's cookie; without one the answer is 401 with the Error body and nothing else. Failed
 * attempts are limited per client address. The public listener serves none of it.
 */

const CHALLENGE = 'Bearer realm="petstore-operator"';
const START = new Date('2026-06-01T12:00:00Z');

/** Every operation of the admin API (but the session's), with a body where it takes one. */
const ADMIN_OPERATIONS: ReadonlyArray<readonly [method: string, path: string, body?: unknown]> = [
  ['GET', '/admin/v1/openapi.json'],
  ['GET', '/admin/v1/status'],
  ['GET', '/admin/v1/accounts'],
  ['POST', '/admin/v1/accounts', { name: 'intruder', plan: 'free' }],
  ['GET', '/admin/v1/accounts/demo'],
  ['PUT', '/admin/v1/accounts/demo/plan', { plan: 'pro' }],
  ['GET', '/admin/v1/accounts/demo/keys'],
  ['POST', '/admin/v1/accounts/demo/keys', {}],
  ['POST', '/admin/v1/keys/key_x/revoke'],
  ['GET', '/admin/v1/bans'],
  ['POST', '/admin/v1/bans/key_x/lift'],
  ['GET', '/admin/v1/accounts/demo/usage'],
  ['GET', '/admin/v1/accounts/demo/usage/history'],
  ['GET', '/admin/v1/usage/history'],
  ['GET', '/admin/v1/usage/top'],
  ['GET', '/admin/v1/deprecated-callers'],
  // Paths no route serves: nothing shows, not even that they do not exist.
  ['GET', '/admin/v1/no-such-thing'],
  ['DELETE', '/admin/v1/accounts'],
  ['GET', '/%61dmin/v1/status'],
];

const CONSOLE_PATHS = ['/console', '/console/', '/console/accounts', '/console/app.js'];

/** Writes `text` on a new connection; everything the server sends until it closes. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

function call(method: string, body: unknown, credentials: HttpRequest): HttpRequest {
  return { ...credentials, method, ...(body === undefined ? {} : { json: body }) };
}

function assertUnauthorized(answer: HttpAnswer, what: string): void {
  assertError(answer, 401, 'unauthorized');
  assert.equal(answer.headers.get('www-authenticate'), CHALLENGE, what);
  assert.equal(answer.headers.get('set-cookie'), null, what);
}

describe('operator authentication', () => {
  // A high limit of failures: this suite makes many on purpose.
  const app = operatorAppForSuite({ authFailuresPerMinute: 10_000 });
  let revoked: string;
  let apiKey: string;

  before(async () => {
    const created = await app.tokens.create('soon revoked');
    revoked = created.token;
    await app.tokens.revoke(created.record.id);
    apiKey = (await app.publicApp.newKey()).key;
    await app.publicApp.services.accounts.createAccount('demo', { plan: 'free' });
  });

  it('answers 401 and nothing else: no token, a wrong, revoked or malformed one, an API key', async () => {
    const wrong = `pso_${'A'.repeat(16)}_${'B'.repeat(32)}`;
    const sameIdWrongSecret = `${app.token.slice(0, 21)}${'C'.repeat(32)}`;
    const credentials: ReadonlyArray<readonly [string, HttpRequest]> = [
      ['no token', {}],
      ['an unknown token', { key: wrong }],
      ['a known id with a wrong secret', { key: sameIdWrongSecret }],
      ['a revoked token', { key: revoked }],
      ['a malformed token', { key: 'let-me-in' }],
      ['an API key', { key: apiKey }],
      ['another scheme', { headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` } }],
      ['an empty bearer', { headers: { authorization: 'Bearer ' } }],
      ['a wrong cookie', { headers: { cookie: `petstore_operator=${wrong}` } }],
      ['a revoked cookie', { headers: { cookie: `petstore_operator=${revoked}` } }],
    ];
    for (const [method, path, body] of ADMIN_OPERATIONS) {
      for (const [name, given] of credentials) {
        assertUnauthorized(await request(app.operator, path, call(method, body, given)), `${method} ${path}, ${name}`);
      }
    }
    for (const path of CONSOLE_PATHS) {
      for (const [name, given] of credentials) {
        assertUnauthorized(await request(app.operator, path, given), `${path}, ${name}`);
      }
    }
    // Nothing was done on the way.
    assert.equal(await app.publicApp.services.accounts.findAccount('intruder'), undefined);
    assert.equal((await app.publicApp.services.accounts.describeAccount('demo')).account.plan, 'free');
  });

  it('two Authorization headers are refused, even when one holds a valid token', async () => {
    const { port } = new URL(app.listener.url);
    const head = await rawExchange(
      Number(port),
      `GET /admin/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${app.token}\r\n` +
        `Authorization: Bearer ${app.token}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(head, /^HTTP\/1\.1 401 /);
    assert.match(head, /\r\nwww-authenticate: Bearer realm="petstore-operator"\r\n/i);
  });

  it('accepts a valid token in Authorization (any case of Bearer), or a session in the cookie', async () => {
    const session = await app.logIn();
    const accepted: HttpRequest[] = [
      { key: app.token },
      { headers: { authorization: `bearer ${app.token}` } },
      { headers: { cookie: `theme=dark; ${session}` } },
    ];
    for (const given of accepted) {
      const answer = await request(app.operator, '/admin/v1/status', given);
      assert.equal(answer.status, 200, answer.text);
    }
  });

  it('serves /metrics and the console login without a token', async () => {
    assert.equal((await request(app.operator, '/metrics')).status, 200);
    for (const path of ['/console/login', '/console/login/login.css']) {
      const answer = await request(app.operator, path);
      assert.notEqual(answer.status, 401, `${path} needs no token: ${answer.text}`);
    }
  });

  it('the public listener serves neither the admin API nor the console', async () => {
    const paths = ['/admin/v1/status', '/admin/v1/accounts', '/admin/v1/openapi.json', '/console', '/console/login'];
    for (const path of paths) {
      const withKey = await request(app.publicApp, path, { key: apiKey });
      assertError(withKey, 404, 'not_found');
      // An operator token is no API key there.
      const withToken = await request(app.publicApp, path, { key: app.token });
      assertError(withToken, 401, 'unauthorized');
      assert.match(withToken.headers.get('www-authenticate') ?? '', /realm="petstore"/);
    }
    const login = await request(app.publicApp, '/admin/v1/session', { method: 'POST', json: { token: app.token } });
    assert.equal(login.status, 401);
    assert.equal(login.headers.get('set-cookie'), null);
  });

  describe('the console session', () => {
    it('POST /admin/v1/session sets a session id in an HttpOnly, SameSite=Strict cookie; bad token: 401', async () => {
      const login = await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token: app.token } });
      assert.equal(login.status, 204, login.text);
      const cookie = login.headers.get('set-cookie') ?? '';
      // 256 random bits, base64url; never the token, nor any part of it.
      assert.match(cookie, /^petstore_operator=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/$/);
      assert.ok(!cookie.includes(app.token.slice(4, 20)) && !cookie.includes(app.token.slice(21)), cookie);
      const again = await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token: app.token } });
      assert.notEqual(again.headers.get('set-cookie'), cookie, 'each login starts a session of its own');
      for (const token of [revoked, 'nope', `pso_${'A'.repeat(16)}_${'B'.repeat(32)}`]) {
        const refused = await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token } });
        assertUnauthorized(refused, token);
      }
      assertError(await request(app.operator, '/admin/v1/session', { method: 'POST', json: {} }), 400, 'invalid_body');
      const foreign = await request(app.operator, '/admin/v1/session', {
        method: 'POST',
        json: { token: app.token },
        headers: { origin: 'https://evil.example' },
      });
      assertError(foreign, 403, 'forbidden');
      assert.equal(foreign.headers.get('set-cookie'), null);
      // The listener is plain HTTP: its own origin is http://, and an https one is another origin.
      const https = await request(app.operator, '/admin/v1/session', {
        method: 'POST',
        json: { token: app.token },
        headers: { origin: app.listener.url.replace('http:', 'https:') },
      });
      assertError(https, 403, 'forbidden');
      assert.equal(https.headers.get('set-cookie'), null);
    });

    it('a token in the cookie, as the console kept it before sessions, opens nothing', async () => {
      const answer = await request(app.operator, '/admin/v1/status', {
        headers: { cookie: `petstore_operator=${app.token}` },
      });
      assertUnauthorized(answer, 'the token as a cookie');
    });

    it('DELETE /admin/v1/session ends the session on the server and clears the cookie', async () => {
      const cookie = await app.logIn();
      const origin = app.listener.url;
      assert.equal((await request(app.operator, '/admin/v1/status', { headers: { cookie } })).status, 200);
      // From another origin, or with none, a logout is refused and the session goes on.
      for (const headers of [{ cookie }, { cookie, origin: 'https://evil.example' }] as Record<string, string>[]) {
        assertError(await request(app.operator, '/admin/v1/session', { method: 'DELETE', headers }), 403, 'forbidden');
      }
      assert.equal((await request(app.operator, '/admin/v1/status', { headers: { cookie } })).status, 200);
      const logout = await request(app.operator, '/admin/v1/session', {
        method: 'DELETE',
        headers: { cookie, origin },
      });
      assert.equal(logout.status, 204);
      assert.match(
        logout.headers.get('set-cookie') ?? '',
        /^petstore_operator=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/,
      );
      // The cookie, replayed, opens nothing any more.
      assertUnauthorized(await request(app.operator, '/admin/v1/status', { headers: { cookie } }), 'after logout');
      // Logging out again, or without a cookie, is no error.
      const twice = await request(app.operator, '/admin/v1/session', { method: 'DELETE', headers: { cookie, origin } });
      assert.equal(twice.status, 204);
      assert.equal((await request(app.operator, '/admin/v1/session', { method: 'DELETE' })).status, 204);
    });

    it('a state-changing request authenticated by the cookie must come from the listener’s own origin', async () => {
      const cookie = await app.logIn();
      const body = (name: string) => ({ name, plan: 'free' });
      const sameOrigin = await request(app.operator, '/admin/v1/accounts', {
        method: 'POST',
        json: body('from-console'),
        headers: { cookie, origin: app.listener.url },
      });
      assert.equal(sameOrigin.status, 201, sameOrigin.text);
      for (const origin of [
        undefined,
        'https://evil.example',
        'null',
        `${app.listener.url.replace('127.0.0.1', 'localhost')}`,
        // Scheme included: the listener is plain HTTP.
        app.listener.url.replace('http:', 'https:'),
        `${app.listener.url}/`,
      ]) {
        const answer = await request(app.operator, '/admin/v1/accounts', {
          method: 'POST',
          json: body('from-elsewhere'),
          headers: origin === undefined ? { cookie } : { cookie, origin },
        });
        assertError(answer, 403, 'forbidden');
      }
      assert.equal(await app.publicApp.services.accounts.findAccount('from-elsewhere'), undefined);
      // Reading needs no Origin; a token in Authorization needs none either (no browser sends it by itself).
      assert.equal((await request(app.operator, '/admin/v1/accounts', { headers: { cookie } })).status, 200);
      const byHeader = await request(app.operator, '/admin/v1/accounts', {
        method: 'POST',
        json: body('from-a-script'),
        key: app.token,
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(byHeader.status, 201, byHeader.text);
    });
  });
});

describe('failed operator authentications are limited per client address', () => {
  const clock = new ManualClock(START);
  // Behind one trusted proxy: the client address is the one it forwards.
  const app = operatorAppForSuite({ clock, env: { TRUST_PROXY: '127.0.0.1' } });
  const wrong = `pso_${'A'.repeat(16)}_${'B'.repeat(32)}`;

  const from = (address: string, given: HttpRequest = {}): HttpRequest => ({
    ...given,
    headers: { ...given.headers, 'x-forwarded-for': address },
  });

  it('after 10 failures in a minute, 429 with Retry-After for every request of the address, valid or not', async () => {
    const address = '203.0.113.10';
    // Requests without any token do not count: a console page loaded before logging in is no guess.
    for (let i = 0; i < 15; i += 1)
      assertUnauthorized(await request(app.operator, '/admin/v1/status', from(address)), 'no token');
    for (let i = 0; i < 10; i += 1) {
      const path = i % 2 === 0 ? '/admin/v1/status' : '/console';
      assertUnauthorized(await request(app.operator, path, from(address, { key: wrong })), `failure ${i + 1}`);
    }
    for (const given of [{ key: app.token }, { key: wrong }, {}]) {
      const limited = await request(app.operator, '/admin/v1/status', from(address, given));
      assertError(limited, 429, 'rate_limited');
      assert.equal(limited.headers.get('retry-after'), '60');
    }
    const login = await request(
      app.operator,
      '/admin/v1/session',
      from(address, { method: 'POST', json: { token: app.token } }),
    );
    assertError(login, 429, 'rate_limited');
    assert.equal(login.headers.get('set-cookie'), null);
    // Metrics are no part of it.
    assert.equal((await request(app.operator, '/metrics', from(address))).status, 200);
    // Another address is not held up.
    assert.equal(
      (await request(app.operator, '/admin/v1/status', from('203.0.113.11', { key: app.token }))).status,
      200,
    );
    // The next minute, the address may try again.
    clock.advance(30_000);
    assert.equal(
      (await request(app.operator, '/admin/v1/status', from(address, { key: app.token }))).headers.get('retry-after'),
      '30',
    );
    clock.advance(30_000);
    assert.equal((await request(app.operator, '/admin/v1/status', from(address, { key: app.token }))).status, 200);
  });

  it('failed logins count too', async () => {
    const address = '203.0.113.20';
    for (let i = 0; i < 10; i += 1) {
      const refused = await request(
        app.operator,
        '/admin/v1/session',
        from(address, { method: 'POST', json: { token: wrong } }),
      );
      assertUnauthorized(refused, `login ${i + 1}`);
    }
    assertError(
      await request(app.operator, '/admin/v1/status', from(address, { key: app.token })),
      429,
      'rate_limited',
    );
    clock.advance(60_000);
  });

  it('an address behind an untrusted hop cannot escape by forging X-Forwarded-For', async () => {
    const direct = await startOperatorTestApp({ clock });
    try {
      for (let i = 0; i < 10; i += 1) {
        const given = { key: wrong, headers: { 'x-forwarded-for': `198.51.100.${i}` } };
        assertUnauthorized(await request(direct.operator, '/admin/v1/status', given), `failure ${i + 1}`);
      }
      const forged = { key: direct.token, headers: { 'x-forwarded-for': '198.51.100.200' } };
      assertError(await request(direct.operator, '/admin/v1/status', forged), 429, 'rate_limited');
    } finally {
      await direct.close();
    }
  });
});

describeEachBackend('failed operator authentications from IPv6 are counted per /64', (backend) => {
  const app = operatorAppForSuite({ backend, clock: new ManualClock(START), env: { TRUST_PROXY: '127.0.0.1' } });
  const wrong = `pso_${'A'.repeat(16)}_${'B'.repeat(32)}`;

  const from = (address: string, given: HttpRequest = {}): HttpRequest => ({
    ...given,
    headers: { ...given.headers, 'x-forwarded-for': address },
  });

  it('guesses from rotating addresses of one /64 lock the whole /64 out, and no other network', async () => {
    // Each guess from another address of 2001:db8:5:6::/64, as a host that holds it may send them.
    for (let i = 0; i < 10; i += 1) {
      const address = `2001:db8:5:6:${(i * 4099).toString(16)}::${i + 1}`;
      const path = i % 2 === 0 ? '/admin/v1/status' : '/admin/v1/session';
      const given = path === '/admin/v1/status' ? { key: wrong } : { method: 'POST', json: { token: wrong } };
      assertUnauthorized(await request(app.operator, path, from(address, given)), `failure ${i + 1} from ${address}`);
    }
    for (const address of ['2001:db8:5:6::1', '2001:DB8:5:6:FFFF:FFFF:FFFF:FFFF', '2001:db8:5:6:abcd::42']) {
      assertError(
        await request(app.operator, '/admin/v1/status', from(address, { key: app.token })),
        429,
        'rate_limited',
      );
    }
    const login = await request(
      app.operator,
      '/admin/v1/session',
      from('2001:db8:5:6:1::1', { method: 'POST', json: { token: app.token } }),
    );
    assertError(login, 429, 'rate_limited');
    // The neighbouring /64s and an IPv4 client are other clients.
    for (const address of ['2001:db8:5:7::1', '2001:db8:5:5:ffff:ffff:ffff:ffff', '203.0.113.30']) {
      const answer = await request(app.operator, '/admin/v1/status', from(address, { key: app.token }));
      assert.equal(answer.status, 200, `${address}: ${answer.text}`);
    }
  });

  it('IPv4-mapped IPv6 counts as its IPv4 address', async () => {
    for (let i = 0; i < 10; i += 1) {
      const address = i % 2 === 0 ? '::ffff:198.51.100.40' : '198.51.100.40';
      assertUnauthorized(await request(app.operator, '/admin/v1/status', from(address, { key: wrong })), address);
    }
    assertError(
      await request(app.operator, '/admin/v1/status', from('::FFFF:C633:6428', { key: app.token })),
      429,
      'rate_limited',
    );
    assert.equal(
      (await request(app.operator, '/admin/v1/status', from('198.51.100.41', { key: app.token }))).status,
      200,
      'the next address is another client',
    );
  });
});

describe('operator tokens never reach a log line', () => {
  const lines: string[] = [];
  const app = operatorAppForSuite({
    logger: createLogger('debug', { write: (line: string) => void lines.push(line) }),
  });

  it('in a header, a cookie, a URL or a login body, valid or not', async () => {
    const secret = app.token.slice(-32);
    const wrong = `pso_${'Q'.repeat(16)}_${'R'.repeat(32)}`;
    await request(app.operator, '/admin/v1/status', { key: app.token });
    await request(app.operator, '/admin/v1/status', { key: wrong });
    await request(app.operator, `/admin/v1/status?token=${app.token}`, {
      headers: { cookie: `petstore_operator=${app.token}` },
    });
    await request(app.operator, `/admin/v1/accounts/${app.token}`, { key: app.token });
    await request(app.operator, `/console/${encodeURIComponent(app.token).replace('_', '%5F')}`);
    await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token: app.token } });
    await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token: wrong, [app.token]: 1 } });
    app.publicApp.services.logger.warn(`failed for ${app.token}`);
    const deadline = Date.now() + 3000;
    while (!lines.some((line) => line.includes('failed for')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const all = lines.join('');
    assert.ok(
      lines.some((line) => line.includes('"msg":"operator request"')),
      'operator requests are logged',
    );
    assert.ok(!all.includes(secret), 'no line holds the secret');
    assert.ok(!all.includes('R'.repeat(32)), 'no line holds a wrong token either');
    assert.doesNotMatch(all, /pso_[0-9A-Za-z]/, 'no token-like text at all');
    assert.ok(all.includes(REDACTED_OPERATOR_TOKEN), 'the redaction shows where a token was');
    const audit = lines
      .map((line) => JSON.parse(line) as { msg: string; operator?: string })
      .find((line) => line.operator);
    assert.match(audit?.operator ?? '', /^[0-9A-Za-z]{16}$/, 'the audit line names the token by its id');
  });

  it('redaction covers encoded forms and keeps the JSON valid', () => {
    const token = `pso_${'a1'.repeat(8)}_${'Zz'.repeat(16)}`;
    for (const form of [
      token,
      token.replace('pso_', 'pso%5F'),
      token.replace('p', '%70'),
      token.replace(/_/g, '%5f'),
    ]) {
      const line = JSON.stringify({ url: `/x?t=${form}&y=1` });
      const redacted = redactKeys(line);
      assert.equal((JSON.parse(redacted) as { url: string }).url, `/x?t=${REDACTED_OPERATOR_TOKEN}&y=1`, form);
    }
  });
});
