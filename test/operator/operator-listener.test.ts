import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { assertError, request } from '../support/http-client.ts';
import { operatorAppForSuite, startOperatorTestApp } from './operator-app.ts';

/**
 * The operator listener's edges (docs/operations.md, "Operator listener"): it answers only the host
 * names it serves (METRICS_HOST, loopback names, OPERATOR_HOSTS), so that a page of another site
 * whose name was made to resolve to it (DNS rebinding) reads nothing, /metrics included; and every
 * answer carries X-Content-Type-Options: nosniff.
 */

interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** One request with the Host header given (fetch sends its own). */
function withHost(url: string, host: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ hostname, port, path, headers: { ...headers, host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** Writes `text` on a new connection; everything the server sends until it closes. */
function rawExchange(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

function assertHostRefused(answer: RawAnswer, what: string): void {
  assertError(answer, 400, 'invalid_host');
  assert.match(String(answer.headers['content-type']), /^application\/json/, what);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(answer.headers['set-cookie'], undefined, what);
  assert.equal(answer.headers['www-authenticate'], undefined, what);
}

describe('the operator listener answers only the host names it serves', () => {
  const app = operatorAppForSuite({
    env: { METRICS_HOST: 'Ops-Box.internal', OPERATOR_HOSTS: 'console.example.com, 10.0.0.7,[FD00::7]' },
  });
  let port: string;

  before(() => {
    port = new URL(app.listener.url).port;
  });

  /** Paths of every kind: the scrape, the admin API (with a token), the console's login, a login, an unknown path. */
  const probes = (token: string): ReadonlyArray<readonly [string, Record<string, string>]> => [
    ['/metrics', {}],
    ['/admin/v1/status', { authorization: `Bearer ${token}` }],
    ['/admin/v1/openapi.json', { authorization: `Bearer ${token}` }],
    ['/console/login', {}],
    ['/console', { authorization: `Bearer ${token}` }],
    ['/no-such-path', {}],
  ];

  it('refuses any other Host with 400 invalid_host and the Error body alone, before anything else', async () => {
    const refused = [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1.evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `other.example.com:${port}`,
      `[::2]:${port}`,
      `10.0.0.8:${port}`,
      `user@127.0.0.1:${port}`,
      `127.0.0.1:${port}/x`,
      `localhost:port`,
    ];
    for (const host of refused) {
      for (const [path, headers] of probes(app.token)) {
        const answer = await withHost(app.listener.url, host, path, headers);
        assertHostRefused(answer, `${host} ${path}`);
        assert.doesNotMatch(answer.text, /petstore_|<html|openapi/i, `${host} ${path}: nothing shows`);
      }
    }
    const login = await withHost(app.listener.url, 'evil.example', '/admin/v1/session', {});
    assertHostRefused(login, 'a login');
    const answer = await withHost(app.listener.url, `evil.example:${port}`, '/metrics');
    assert.match(JSON.parse(answer.text).message, /"evil\.example:\d+".*OPERATOR_HOSTS/);
  });

  it('serves its own names with any port: loopback names, METRICS_HOST and OPERATOR_HOSTS, in any case', async () => {
    const served = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'localhost',
      `LocalHost:${port}`,
      `[::1]:${port}`,
      `[0:0:0:0:0:0:0:1]:${port}`,
      '127.0.0.1:1',
      `ops-box.internal:${port}`,
      `OPS-BOX.INTERNAL`,
      `console.example.com:${port}`,
      '10.0.0.7:9464',
      `[fd00::7]:${port}`,
    ];
    for (const host of served) {
      for (const [path, headers] of probes(app.token)) {
        const answer = await withHost(app.listener.url, host, path, headers);
        assert.notEqual(answer.status, 400, `${host} ${path}: ${answer.text}`);
        assert.ok([200, 404].includes(answer.status), `${host} ${path}: ${answer.status}`);
      }
    }
  });

  it('refuses HTTP/1.1 with no Host or an empty one, with the Error body; HTTP/1.0 may send none', async () => {
    const missing = await rawExchange(app.listener.url, 'GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.match(missing, /^HTTP\/1\.1 400 /);
    assert.match(missing, /\r\nx-content-type-options: nosniff\r\n/i);
    const body = JSON.parse(missing.slice(missing.indexOf('\r\n\r\n') + 4)) as { code: string; status: number };
    assert.deepEqual([body.code, body.status], ['invalid_host', 400]);
    const empty = await rawExchange(app.listener.url, 'GET /metrics HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n');
    assert.match(empty, /^HTTP\/1\.1 400 [^]*"code":"invalid_host"/);
    const old = await rawExchange(app.listener.url, 'GET /metrics HTTP/1.0\r\n\r\n');
    assert.match(old, /^HTTP\/1\.1 200 /);
  });

  it('documents the refusal: every admin operation may answer 400 invalid_host', async () => {
    const document = (await request(app.operator, '/admin/v1/openapi.json', { key: app.token })).json<{
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    }>();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        assert.match(operation.responses['400']?.description ?? '', /invalid_host/, `${method} ${path}`);
      }
    }
  });
});

describe('with METRICS_HOST a wildcard', () => {
  for (const wildcard of ['0.0.0.0', '::']) {
    it(`${wildcard}: loopback names and OPERATOR_HOSTS only, never the wildcard itself`, async () => {
      const app = await startOperatorTestApp({
        env: { METRICS_HOST: wildcard, OPERATOR_HOSTS: 'ops.example.com' },
      });
      try {
        const { port } = new URL(app.listener.url);
        for (const host of [`0.0.0.0:${port}`, `[::]:${port}`, 'evil.example'])
          assertHostRefused(await withHost(app.listener.url, host, '/metrics'), host);
        for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `ops.example.com:${port}`])
          assert.equal((await withHost(app.listener.url, host, '/metrics')).status, 200, host);
      } finally {
        await app.close();
      }
    });
  }
});

describe('every answer of the operator listener carries nosniff', () => {
  const app = operatorAppForSuite();

  it('a 200, a 401, a 404 and a 405 of the admin API, a 403, the console and /metrics', async () => {
    const cookie = await app.logIn();
    const answers = [
      [200, await request(app.operator, '/admin/v1/status', { key: app.token })],
      [401, await request(app.operator, '/admin/v1/status')],
      [404, await request(app.operator, '/admin/v1/accounts/nobody-here', { key: app.token })],
      [405, await request(app.operator, '/admin/v1/status', { method: 'DELETE', key: app.token })],
      [400, await request(app.operator, '/admin/v1/accounts', { method: 'POST', json: {}, key: app.token })],
      [403, await request(app.operator, '/admin/v1/accounts', { method: 'POST', json: {}, headers: { cookie } })],
      [204, await request(app.operator, '/admin/v1/session', { method: 'DELETE' })],
      [200, await request(app.operator, '/console/login')],
      [200, await request(app.operator, '/metrics')],
      [404, await request(app.operator, '/elsewhere')],
    ] as const;
    for (const [status, answer] of answers) {
      assert.equal(answer.status, status, answer.text);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', `${status}: ${answer.text}`);
    }
  });
});

describe('OPERATOR_HOSTS', () => {
  it('host names, comma-separated, in canonical form; empty by default', () => {
    assert.deepEqual(loadConfig({}).operatorHosts, []);
    assert.deepEqual(loadConfig({ OPERATOR_HOSTS: ' Ops.Example.com ,10.0.0.7, [FD00:0::7],::1' }).operatorHosts, [
      'ops.example.com',
      '10.0.0.7',
      '[fd00::7]',
      '[::1]',
    ]);
    for (const wrong of [
      'http://ops.example.com',
      'ops.example.com:9464',
      'ops.example.com/console',
      'a,,b',
      'a,',
      '*.example.com',
      '0.0.0.0',
      '::',
      'ops example',
      '-ops.example.com',
      '[ops.example.com]',
    ]) {
      assert.throws(
        () => loadConfig({ OPERATOR_HOSTS: wrong }),
        /^Error: invalid configuration: OPERATOR_HOSTS has an (empty entry|entry that is not a host name).*\(got "/,
        wrong,
      );
    }
  });
});
