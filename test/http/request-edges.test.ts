import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import { startOperatorTestApp, type OperatorTestApp } from '../operator/operator-app.ts';

/**
 * The rules every request meets on both listeners, whatever its route (docs/api.md, "Requests"):
 * one well-formed host (RFC 9112 section 3.2), no query parameter an operation does not take, and
 * no body where an operation takes none. Host problems are sent over raw TCP: no HTTP client
 * sends two Host headers or an absolute-form target.
 */

interface RawAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * Writes `head` (its request line and headers, without the empty line), then `Connection: close`
 * and the empty line, on a new connection; the answer. A head that holds the empty line already is
 * followed by its body: it is sent as it is.
 */
function exchange(url: string, head: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const text = head.includes('\r\n\r\n') ? head : `${head}\r\nConnection: close\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
      resolve({ status, text: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

describeEachBackend('requests on both listeners', (backend) => {
  let app: OperatorTestApp;
  let key: string;
  /** Each listener: its URL, a path it serves with the credentials given, and a Host it serves. */
  let listeners: ReadonlyArray<{ name: string; url: string; path: string; auth: string; host: string }>;

  before(async () => {
    app = await startOperatorTestApp({ backend });
    ({ key } = await app.publicApp.newKey());
    listeners = [
      {
        name: 'public',
        url: app.publicApp.url,
        path: '/v1/usage',
        auth: `Authorization: Bearer ${key}`,
        host: 'api.example.com',
      },
      {
        name: 'operator',
        url: app.listener.url,
        path: '/admin/v1/status',
        auth: `Authorization: Bearer ${app.token}`,
        host: '127.0.0.1',
      },
    ];
  });
  after(() => app.close());

  it('serves one well-formed Host, with a port from 0 to 65535, and an absolute-form target naming it', async () => {
    for (const { name, url, path, auth, host } of listeners) {
      for (const head of [
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}`,
        `GET ${path} HTTP/1.1\r\nHost: ${host}:0\r\n${auth}`,
        `GET ${path} HTTP/1.1\r\nHost: ${host}:65535\r\n${auth}`,
        `GET ${path} HTTP/1.1\r\nHost: [::1]:8080\r\n${auth}`,
        `GET http://${host}:8080${path} HTTP/1.1\r\nHost: ${host}:8080\r\n${auth}`,
        `GET HTTP://${host.toUpperCase()}${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}`,
        `GET ${path} HTTP/1.0\r\n${auth}`,
      ]) {
        const answer = await exchange(url, head);
        assert.equal(answer.status, 200, `${name}: ${head}\n${answer.text}`);
      }
    }
  });

  it('refuses a repeated, missing, empty or malformed Host, a bad port, and a target naming another host', async () => {
    const refusals = (path: string, host: string): Array<[head: string, mention: string]> => [
      [`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nHost: ${host}`, '2 Host headers'],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example`, '2 Host headers'],
      [`GET ${path} HTTP/1.1`, 'Host header'],
      [`GET ${path} HTTP/1.1\r\nHost: `, '""'],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:99999`, `"${host}:99999"`],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:65536`, `"${host}:65536"`],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:`, `"${host}:"`],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:123456`, '0 to 65535'],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:80a`, '0 to 65535'],
      [`GET ${path} HTTP/1.1\r\nHost: ${host}:-1`, '0 to 65535'],
      [`GET ${path} HTTP/1.1\r\nHost: user@${host}`, '0 to 65535'],
      [`GET ${path} HTTP/1.1\r\nHost: [not-v6]:80`, '0 to 65535'],
      [`GET http://evil.example${path} HTTP/1.1\r\nHost: ${host}`, '"evil.example"'],
      [`GET http://${host}:81${path} HTTP/1.1\r\nHost: ${host}:80`, 'must be the same'],
      [`GET http://user@${host}${path} HTTP/1.1\r\nHost: ${host}`, 'no user information'],
      [`GET http://${host}:99999${path} HTTP/1.1\r\nHost: ${host}`, '0 to 65535'],
    ];
    for (const { name, url, path, auth, host } of listeners) {
      for (const [head, mention] of refusals(path, host)) {
        const answer = await exchange(url, `${head}\r\n${auth}`);
        assertError(answer, 400, 'invalid_host', mention);
        assert.ok(answer.status === 400, `${name}: ${head}`);
      }
    }
  });

  it('the operator listener refuses an absolute-form target whose host it does not serve', async () => {
    const auth = `Authorization: Bearer ${app.token}`;
    for (const head of [
      `GET http://evil.example/metrics HTTP/1.1\r\nHost: evil.example`,
      `GET http://evil.example/admin/v1/status HTTP/1.1\r\nHost: evil.example\r\n${auth}`,
      // HTTP/1.0 may leave Host out: the target's host is the request's.
      `GET http://evil.example/metrics HTTP/1.0`,
    ]) {
      assertError(await exchange(app.listener.url, head), 400, 'invalid_host', '"evil.example"', 'OPERATOR_HOSTS');
    }
    const served = await exchange(app.listener.url, 'GET http://localhost/metrics HTTP/1.0');
    assert.equal(served.status, 200, served.text);
  });

  it('refuses a query parameter an operation does not take, naming it, on both listeners', async () => {
    assertError(
      await request(app.publicApp, '/v1/pets?limt=5&status=sold', { key }),
      400,
      'invalid_query',
      "unknown query parameter 'limt'; this operation takes limit, status, cursor",
    );
    assertError(
      await request(app.publicApp, '/v1/usage?verbose=1&x', { key }),
      400,
      'invalid_query',
      "unknown query parameters 'verbose', 'x'; this operation takes none",
    );
    const head = await request(app.publicApp, '/v1/usage?verbose=1', { key, method: 'HEAD' });
    assert.equal(head.status, 400);
    assertError(
      await request(app.operator, '/admin/v1/audit?q=x', { key: app.token }),
      400,
      'invalid_query',
      "unknown query parameter 'q'; this operation takes actor, target, action, via, from, to, limit, cursor",
    );
    assertError(
      await request(app.operator, '/admin/v1/status?constructor=1', { key: app.token }),
      400,
      'invalid_query',
      "'constructor'; this operation takes none",
    );
    // The parameters each document lists are taken.
    assert.equal((await request(app.publicApp, '/v1/pets?limit=5&status=sold', { key })).status, 200);
    assert.equal((await request(app.operator, '/admin/v1/audit?limit=5', { key: app.token })).status, 200);
  });

  it('documents, pages and probes outside the documents take any query parameter', async () => {
    for (const path of ['/v1/openapi.json?v=2', '/docs/?cache=no', '/healthz?probe=1', '/readyz?probe=1']) {
      assert.equal((await request(app.publicApp, path)).status, 200, path);
    }
    for (const path of ['/metrics?x=1', '/console/login?next=%2Fconsole%2Faudit']) {
      assert.equal((await request(app.operator, path)).status, 200, path);
    }
  });

  it('refuses a body sent to an operation that takes none, and takes an empty one', async () => {
    const { keyId } = await app.publicApp.newKey();
    const revoke = `/admin/v1/keys/${keyId}/revoke`;
    assertError(
      await request(app.operator, revoke, { method: 'POST', key: app.token, json: { scopes: ['pets:read'] } }),
      400,
      'invalid_body',
      'POST /admin/v1/keys/{id}/revoke takes no request body',
    );
    assertError(
      await request(app.operator, revoke, { method: 'POST', key: app.token, body: 'x' }),
      400,
      'invalid_body',
      'takes no request body',
    );
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{}'));
        controller.close();
      },
    });
    assertError(
      await request(app.operator, revoke, { method: 'POST', key: app.token, body: chunked }),
      400,
      'invalid_body',
      'takes no request body',
    );
    const json = 'Connection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
    assertError(
      await exchange(app.publicApp.url, `GET /v1/usage HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${json}`),
      400,
      'invalid_body',
      'GET /v1/usage takes no request body',
    );
    assertError(
      await exchange(app.listener.url, `GET /metrics HTTP/1.1\r\nHost: localhost\r\n${json}`),
      400,
      'invalid_body',
      'GET /metrics',
    );
    assert.equal(
      (await request(app.operator, '/admin/v1/audit?limit=1', { key: app.token })).json<{ entries: unknown[] }>()
        .entries.length,
      0,
      'nothing was revoked',
    );

    // No body, Content-Length: 0, and an empty body labelled JSON are all no body.
    const empty: Record<string, string>[] = [{}, { 'content-length': '0' }, { 'content-type': 'application/json' }];
    for (const headers of empty) {
      const { keyId: id } = await app.publicApp.newKey();
      const revoked = await request(app.operator, `/admin/v1/keys/${id}/revoke`, {
        method: 'POST',
        key: app.token,
        headers,
      });
      assert.equal(revoked.status, 200, `${JSON.stringify(headers)}: ${revoked.text}`);
    }
    assert.equal((await request(app.publicApp, '/v1/usage', { key, headers: { 'content-length': '0' } })).status, 200);
  });

  it('documents the 400 of every operation, with invalid_host, invalid_query and invalid_body', async () => {
    type Document = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const publicDocument = (await request(app.publicApp, '/v1/openapi.json')).json<Document>();
    const adminDocument = (await request(app.operator, '/admin/v1/openapi.json', { key: app.token })).json<Document>();
    // The public document gives an example of each code; the admin document names them.
    const documented = [
      [publicDocument, ['invalid_host', 'invalid_query', 'invalid_body']],
      [adminDocument, ['invalid_host']],
    ] as const;
    for (const [document, codes] of documented) {
      for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const text = JSON.stringify(operation.responses['400'] ?? {});
          for (const code of codes) assert.ok(text.includes(code), `${method} ${path} documents ${code}`);
        }
      }
    }
  });
});
