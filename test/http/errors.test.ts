import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import {
  assertError,
  assertNoStackTrace,
  request,
  type HttpAnswer,
  type HttpRequest,
  type Pet,
} from '../support/http-client.ts';
import { loadContract, schemaErrors } from '../support/openapi-contract.ts';
import { rawExchange } from '../support/raw-http.ts';
import { appForSuite } from '../support/suite-app.ts';

interface RawResponse {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly text: string;
}

/** Sends bytes over a plain TCP socket and reads whatever the server answers until it closes (or 2 s). */
function rawAnswer(url: string, request: string | Buffer): Promise<string> {
  return rawExchange(url, request, { endAfterMs: 2000 });
}

function parseRaw(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, `no HTTP response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  assert.ok(match, `bad status line ${JSON.stringify(statusLine)}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let text = raw.slice(split + 4);
  const length = headers.get('content-length');
  if (length !== undefined) text = Buffer.from(text).subarray(0, Number(length)).toString('utf8');
  return { status: Number(match[1]), headers, text };
}

/** Any non-2xx answer: exactly {code, message, status}, status equal to the HTTP status, no stack trace. */
function assertErrorShape(response: { readonly status: number; readonly text: string }): void {
  assert.ok(response.status >= 400, `expected an error status, got ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    assert.fail(`a ${response.status} body must be JSON: ${response.text.slice(0, 200)}`);
  }
  assert.ok(
    typeof body === 'object' && body !== null && !Array.isArray(body),
    `a ${response.status} body must be a JSON object`,
  );
  assert.deepEqual(
    Object.keys(body).sort(),
    ['code', 'message', 'status'],
    `body must be exactly {code, message, status}: ${response.text}`,
  );
  const error = body as { code: unknown; message: unknown; status: unknown };
  assert.equal(typeof error.code, 'string');
  assert.match(String(error.code), /^[a-z_]+$/);
  assert.equal(typeof error.message, 'string');
  assert.ok(String(error.message).length > 0);
  assert.equal(error.status, response.status, 'body status equals the HTTP status');
  assertNoStackTrace(response.text);
}

/** A body declared as JSON, whatever its bytes. */
const JSON_BODY = { 'content-type': 'application/json' };

/** A raw POST /v1/pets head with the key and JSON Content-Type, followed by `rest`. */
function postRequest(key: string, rest: string): string {
  const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`;
  return `${head}Content-Type: application/json\r\n${rest}`;
}

describeEachBackend('errors', (backend) => {
  const app = appForSuite({ backend, env: { ANON_LIMIT_PER_MINUTE: '100000' } });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'business' })));

  async function assertAlive(): Promise<void> {
    assert.equal((await request(app, '/healthz')).status, 200, 'the process still answers');
    const list = await request(app, '/v1/pets?limit=1', { key });
    assert.equal(list.status, 200);
  }

  for (const path of [
    '/v1/nope',
    '/v1/store/orders',
    '/v1/pets/1/photos',
    '/v2/pets',
    '/',
    '/v1',
    '/pets',
    '/V1/PETS',
    '/v1/openapi.yaml',
  ]) {
    it(`answers 404 not_found for GET ${path} (with a key)`, async () => {
      const response = await request(app, path, { key });
      assertError(response, 404, 'not_found');
    });
  }

  it('answers 404 for unknown paths with any method', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      assertError(await request(app, '/v1/store/orders', { method, key }), 404, 'not_found');
    }
  });

  const wrongMethods: Array<[method: string, path: string, allowed: string[]]> = [
    ['PUT', '/v1/pets', ['GET', 'POST']],
    ['PATCH', '/v1/pets', ['GET', 'POST']],
    ['DELETE', '/v1/pets', ['GET', 'POST']],
    ['POST', '/v1/pets/1', ['GET']],
    ['PUT', '/v1/pets/1', ['GET']],
    ['PATCH', '/v1/pets/1', ['GET']],
    ['DELETE', '/v1/pets/1', ['GET']],
  ];
  for (const [method, path, allowed] of wrongMethods) {
    it(`answers ${method} ${path} with 405 method_not_allowed and Allow`, async () => {
      const response = await request(app, path, { method, key });
      assertError(response, 405, 'method_not_allowed', method);
      const allow = (response.headers.get('allow') ?? '').split(',').map((name) => name.trim());
      for (const name of allowed) assert.ok(allow.includes(name), `Allow ${JSON.stringify(allow)} lists ${name}`);
      assert.ok(!allow.includes(method), `Allow must not list ${method}`);
    });
  }

  it('answers 405 to a wrong method whatever its body', async () => {
    const variants: Array<[method: string, path: string, headers: Record<string, string>, body: string | undefined]> = [
      ['DELETE', '/v1/pets/1', { 'content-type': 'application/json' }, undefined],
      ['PUT', '/v1/pets', { 'content-type': 'application/json' }, '{bad'],
      ['PUT', '/v1/pets', { 'content-type': 'text/plain' }, 'x'],
      ['PATCH', '/v1/pets/1', { 'content-type': 'application/json' }, 'x'.repeat(20_000)],
    ];
    for (const [method, path, headers, body] of variants) {
      const response = await request(app, path, { method, key, headers, body });
      assertError(response, 405, 'method_not_allowed');
      assert.ok(response.headers.get('allow'));
    }
  });

  it('refuses OPTIONS with 405 and Allow while CORS is off', async () => {
    const response = await request(app, '/v1/pets', { method: 'OPTIONS', key });
    assertError(response, 405, 'method_not_allowed');
    assert.ok(response.headers.get('allow'));
  });

  it('gives every error of the API the exact Error body', async () => {
    const create = (options: HttpRequest): Promise<HttpAnswer> =>
      request(app, '/v1/pets', { method: 'POST', key, ...options });
    const pet = (await create({ json: { name: 'err', categoryId: 1 } })).json<Pet>();
    const idempotency = { 'idempotency-key': `err-${pet.id}` };
    assert.equal((await create({ json: { name: 'a', categoryId: 1 }, headers: idempotency })).status, 201);
    const responses = [
      await request(app, '/v1/pets?limit=0', { key }),
      await request(app, '/v1/pets/abc', { key }),
      await request(app, '/v1/pets/999999', { key }),
      await create({ json: '{oops' }),
      await create({ json: '{"name":""}' }),
      await create({ body: 'x', headers: { 'content-type': 'text/plain' } }),
      await create({ json: { name: 'x', categoryId: 1, pad: 'x'.repeat(20_000) } }),
      await create({ json: { name: 'b', categoryId: 1 }, headers: idempotency }),
      await request(app, '/v1/pets'),
      await request(app, '/v1/pets', { headers: { authorization: 'Bearer nope' } }),
      await request(app, '/nowhere', { key }),
      await request(app, '/v1/pets/1', { method: 'DELETE', key }),
      await request(app, '/nowhere'),
    ];
    const statuses = new Set(responses.map((response) => response.status));
    for (const status of [400, 401, 404, 405, 413, 415, 422]) assert.ok(statuses.has(status), `covered ${status}`);
    const doc = await loadContract(app);
    for (const response of responses) {
      assertErrorShape(response);
      assert.equal(schemaErrors(doc, 'Error', JSON.parse(response.text)), undefined);
    }
  });

  it('answers a malformed HTTP request on a raw socket with a 400 Error body, and keeps running', async () => {
    const requests = [
      'GARBAGE\r\n\r\n',
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n',
      'GET /v1/pets HTTP/9.9\r\nHost: x\r\n\r\n',
      postRequest(key, `Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`),
      postRequest(key, `Content-Length: abc\r\n\r\n{}`),
      postRequest(key, `Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`),
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n',
      '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003',
    ];
    for (const request of requests) {
      const raw = await rawAnswer(app.url, request);
      const response = parseRaw(raw);
      assert.equal(response.status, 400, `${JSON.stringify(request.slice(0, 60))} → ${raw.slice(0, 200)}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assertErrorShape(response);
    }
    await assertAlive();
  });

  it('answers huge headers with 431 and an Error body, never 500', async () => {
    // On raw sockets: the document describes the operations, not what comes before routing.
    const head = `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`;
    const big = parseRaw(await rawAnswer(app.url, `${head}X-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`));
    assert.equal(big.status, 431);
    assertErrorShape(big);
    const many = Array.from({ length: 2000 }, (_, i) => `X-H-${i}: value\r\n`).join('');
    const manyResponse = parseRaw(await rawAnswer(app.url, `${head}${many}\r\n`));
    assert.equal(manyResponse.status, 431, ' 2,000 small headers are over the header limit too');
    assertErrorShape(manyResponse);
    const rawBig = parseRaw(
      await rawAnswer(app.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(100_000)}\r\n\r\n`),
    );
    assert.equal(rawBig.status, 431);
    assertErrorShape(rawBig);
    await assertAlive();
  });

  /** What each hostile body gets: 400 with the Error body of its code, or 201 where no code is given; never a 500. */
  const hostileBodies: Array<[label: string, body: string | Uint8Array, code?: string]> = [
    [
      'invalid UTF-8',
      Buffer.concat([
        Buffer.from('{"name":"'),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        Buffer.from('","categoryId":1}'),
      ]),
      'invalid_json',
    ],
    ['a UTF-8 byte order mark', Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"name":"bom","categoryId":1}')])],
    ['UTF-16', Buffer.from([0xff, 0xfe, 0x7b, 0x00]), 'invalid_json'],
    ['8,000 nested arrays', '['.repeat(8000) + ']'.repeat(8000), 'invalid_json'],
    ['2,500 nested objects', '{"a":'.repeat(2500) + '1' + '}'.repeat(2500), 'invalid_json'],
    [
      'a status of 3,000 nested arrays',
      `{"name":"x","categoryId":1,"status":${'['.repeat(3000)}${']'.repeat(3000)}}`,
      'invalid_json',
    ],
    ['a __proto__ field', '{"__proto__":{"polluted":true},"name":"x","categoryId":1}', 'invalid_body'],
    [
      'a constructor field',
      '{"constructor":{"prototype":{"polluted":true}},"name":"x","categoryId":1}',
      'invalid_body',
    ],
    ['a name object with __proto__', '{"name":{"__proto__":{"polluted":true}},"categoryId":1}', 'invalid_body'],
    ['a status object with toString', '{"name":"x","categoryId":1,"status":{"toString":"sold"}}', 'invalid_body'],
    ['a 60-digit categoryId', `{"name":"x","categoryId":${'1234567890'.repeat(6)}}`, 'invalid_body'],
    ['a categoryId that underflows to zero', '{"name":"x","categoryId":-0.0000000000000000001e-400}', 'invalid_body'],
    ['a categoryId that overflows to infinity', '{"name":"x","categoryId":1e309}', 'invalid_body'],
    ['a name of a lone surrogate', '{"name":"\\ud800","categoryId":1}', 'invalid_body'],
    ['a NUL after the document', '{"name":"x","categoryId":1}\u0000', 'invalid_json'],
    ['a lone NUL', '\u0000', 'invalid_json'],
    ['a repeated name (the last one counts)', '{"name":"x","categoryId":1,"name":"y","name":"z"}'],
    ['a name of 8,000 characters', JSON.stringify({ name: 'x'.repeat(8000), categoryId: 1 }), 'invalid_body'],
  ];

  for (const [label, body, code] of hostileBodies) {
    it(`answers a body with ${label} with ${code === undefined ? 201 : `400 ${code}`}, never 500`, async () => {
      const response = await request(app, '/v1/pets', { method: 'POST', key, headers: JSON_BODY, body });
      if (code === undefined) assert.equal(response.status, 201, response.text);
      else assertError(response, 400, code);
    });
  }

  it('keeps the last of repeated JSON names, and refuses a categoryId that underflows to 0', async () => {
    const repeated = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      json: '{"name":"x","categoryId":1,"name":"y","name":"z"}',
    });
    assert.equal(repeated.status, 201, repeated.text);
    assert.equal(repeated.json<Pet>().name, 'z');
    const underflow = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      json: '{"name":"tiny","categoryId":-0.0000000000000000001e-400}',
    });
    assertError(underflow, 400, 'invalid_body');
  });

  it('parses __proto__ and constructor in bodies without polluting prototypes', async () => {
    for (const [, body] of hostileBodies) {
      const response = await request(app, '/v1/pets', { method: 'POST', key, headers: JSON_BODY, body });
      assert.ok(response.status === 201 || response.status === 400, `${response.status} ${response.text}`);
    }
    assert.equal(
      (Object.prototype as Record<string, unknown>)['polluted'],
      undefined,
      'Object.prototype is not polluted',
    );
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    await assertAlive();
  });

  /** What each hostile query or path gets; unknown parameters and bracketed names are ignored. */
  const hostilePaths: Array<[path: string, status: 200 | 400 | 404, code?: string]> = [
    // Brackets make no arrays or objects: each is one unknown parameter.
    ['/v1/pets?__proto__[polluted]=1', 400, 'invalid_query'],
    ['/v1/pets?constructor[prototype][polluted]=1', 400, 'invalid_query'],
    ['/v1/pets?limit[]=1', 400, 'invalid_query'],
    ['/v1/pets?limit[a]=1', 400, 'invalid_query'],
    ['/v1/pets?status[]=sold', 400, 'invalid_query'],
    ['/v1/pets?limit=%00', 400, 'invalid_query'],
    ['/v1/pets?limit=%F0%28', 400, 'invalid_query'],
    ['/v1/pets?status=%C0%AF', 400, 'invalid_query'],
    [`/v1/pets?cursor=${'A'.repeat(5000)}`, 400, 'invalid_query'],
    [`/v1/pets?${'a=1&'.repeat(3000)}`, 400, 'invalid_query'],
    ['/v1/pets/%00', 400, 'invalid_path'],
    ['/v1/pets/%F0%28', 400, 'invalid_path'],
    ['/v1/pets/..%2F..%2Fetc%2Fpasswd', 400, 'invalid_path'],
    ['/v1/pets/1;drop', 400, 'invalid_path'],
    [`/v1/pets/${'9'.repeat(5000)}`, 400, 'invalid_path'],
    ['/v1/pets/-0', 404, 'not_found'],
    ['/v1/pets/+1', 400, 'invalid_path'],
    ['/v1//pets', 404, 'not_found'],
    ['/v1/pets/1/', 404, 'not_found'],
    ['/v1/pets/', 400, 'invalid_path'],
  ];

  for (const [path, status, code] of hostilePaths) {
    it(`answers GET ${path.slice(0, 60)} with ${status}${code ? ` ${code}` : ''}, never 500`, async () => {
      const response = await request(app, path, { key });
      if (code === undefined) assert.equal(response.status, 200, response.text);
      else assertError(response, status, code);
    });
  }

  it('parses __proto__ and constructor in queries without polluting prototypes', async () => {
    for (const [path] of hostilePaths) await request(app, path, { key });
    assert.equal((Object.prototype as Record<string, unknown>)['polluted'], undefined);
    await assertAlive();
  });

  it('answers a path with broken percent-encoding with 400 invalid_path, with or without a key', async () => {
    for (const path of ['/v1/pets/%ZZ', '/v1/pets%', '/nowhere/%E0%A4%A']) {
      assertError(await request(app, path, { key }), 400, 'invalid_path', path);
      assertError(await request(app, path), 400, 'invalid_path', path);
    }
  });
});

/** Sends `request` and then nothing more; resolves with what the server wrote once it closes the connection. */
function stalledExchange(
  url: string,
  request: string,
  giveUpMs: number,
): Promise<{ raw: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept a stalled connection open for ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ raw: Buffer.concat(chunks).toString('utf8'), closedAfterMs: performance.now() - started });
    });
    if (request !== '') socket.write(request);
  });
}

describeEachBackend(
  'slow clients (REQUEST_TIMEOUT_MS)',
  (backend) => {
    const timeoutMs = 1000;
    const app = appForSuite({ backend, env: { REQUEST_TIMEOUT_MS: String(timeoutMs) } });
    let key: string;
    before(async () => ({ key } = await app.newKey()));

    const stalls: Array<[string, () => string]> = [
      ['headers that stop halfway', () => 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthor'],
      ['a body shorter than its Content-Length', () => postRequest(key, `Content-Length: 100\r\n\r\n{"name":`)],
    ];
    for (const [what, request] of stalls) {
      it(`answers ${what} with 408 and an Error body, then closes`, async () => {
        const { raw, closedAfterMs } = await stalledExchange(app.url, request(), 10 * timeoutMs);
        const response = parseRaw(raw);
        assert.equal(response.status, 408, raw.slice(0, 200));
        assertErrorShape(response);
        assert.equal(response.headers.get('connection'), 'close');
        // Node's sweep runs every second, so the cut comes between the timeout and a second later.
        assert.ok(
          closedAfterMs >= timeoutMs * 0.9 && closedAfterMs < timeoutMs + 2500,
          `closed after ${Math.round(closedAfterMs)} ms`,
        );
      });
    }

    it('closes a connection that never sends a byte', async () => {
      const { closedAfterMs } = await stalledExchange(app.url, '', 10 * timeoutMs);
      assert.ok(closedAfterMs < timeoutMs + 2500, `closed after ${Math.round(closedAfterMs)} ms`);
    });

    it('keeps serving requests that arrive in time', async () => {
      assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    });
  },
  { concurrency: true },
);
