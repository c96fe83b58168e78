import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { before, describe, it } from 'node:test';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { assertDocumentedAnswer } from '../support/openapi-contract.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { appForSuite } from '../support/suite-app.ts';
import type { TestApp } from '../support/test-app.ts';

/**
 * The HTTP edge at its corners: number literals, repeated credentials, charsets, quoting of huge
 * input, answers Node would write by itself (Expect, CONNECT), the method table, the interim
 * 100 Continue, and the address limit before key lookups.
 */

const MID = new Date('2026-06-01T12:00:30Z');

interface RawAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly text: string;
}

/** Reads HTTP answers from a raw socket, one at a time, interim answers included. */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private closed = false;
  private wake: (() => void) | undefined;
  private readonly socket: Socket;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    this.socket.on('error', () => undefined);
  }

  write(data: string): void {
    this.socket.write(data);
  }

  /** The next answer, or undefined when the connection closed first or nothing came within `ms`. */
  async next(ms = 2000): Promise<RawAnswer | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const answer = this.take();
      if (answer) return answer;
      if (this.closed || Date.now() >= deadline) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
  }

  /** Resolves true once the server closed the connection (within `ms`). */
  async closedWithin(ms = 2000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }

  private take(): RawAnswer | undefined {
    const split = this.buffer.indexOf('\r\n\r\n');
    if (split < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffer.subarray(0, split).toString('latin1').split('\r\n');
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get('content-length') ?? 0);
    if (this.buffer.length < split + 4 + length) return undefined;
    const text = this.buffer.subarray(split + 4, split + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(split + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, text };
  }
}

/** One raw request on a fresh connection; its first answer. */
async function rawRequest(app: TestApp, head: string): Promise<RawAnswer> {
  const connection = new RawConnection(app.url);
  try {
    connection.write(head);
    const answer = await connection.next();
    assert.ok(answer, `no answer to ${JSON.stringify(head.slice(0, 80))}`);
    return answer;
  } finally {
    connection.close();
  }
}

function rawError(answer: RawAnswer): { code: string; message: string; status: number } {
  return errorOf({
    status: answer.status,
    headers: new Headers(),
    text: answer.text,
    json: <T>() => JSON.parse(answer.text) as T,
  });
}

function postPet(app: TestApp, key: string, body: string, contentType = 'application/json'): Promise<HttpAnswer> {
  return request(app, '/v1/pets', { method: 'POST', key, body, headers: { 'content-type': contentType } });
}

describeEachBackend('HTTP edge: categoryId must be written as an integer', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 })));

  for (const literal of ['0.9999999999999999999', '9007199254740991.4', '1e-400', '1.0', '1E3', '-0.0', '1e2']) {
    it(`refuses ${literal} with invalid_body naming categoryId, creating nothing`, async () => {
      const answer = await postPet(app, key, `{"name":"Rex","categoryId":${literal}}`);
      const error = errorOf(answer);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, /categoryId/);
      assert.match(error.message, /no fraction, no exponent/);
    });
  }

  it('accepts plain integers, a minus sign and int64 extremes, digit for digit', async () => {
    for (const literal of ['-0', '0', '-42', '9223372036854775807', '-9223372036854775808']) {
      const answer = await postPet(app, key, `{"name":"Rex","categoryId":${literal}}`);
      assert.equal(answer.status, 201, answer.text);
      const expected = literal === '-0' ? '0' : literal;
      assert.match(answer.text, new RegExp(`"categoryId":${expected}[,}]`));
    }
  });
});

describe('HTTP edge: credentials, charsets, quoting, protocol answers, methods', () => {
  const app = appForSuite({ env: { ANON_LIMIT_PER_MINUTE: '1000' } });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 })));

  it('answers 401 with WWW-Authenticate to a request with two Authorization headers', async () => {
    for (const second of [`Bearer ${key}`, 'Bearer nonsense', `Bearer ${generateApiKey()}`]) {
      const answer = await rawRequest(
        app,
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nauthorization: ${second}\r\n\r\n`,
      );
      assert.equal(answer.status, 401, answer.text);
      assert.equal(rawError(answer).code, 'unauthorized');
      assert.match(rawError(answer).message, /more than one Authorization header/);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer realm="petstore", error="invalid_request"/);
    }
    const single = await rawRequest(app, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    assert.equal(single.status, 200, 'one header still works');
  });

  for (const contentType of [
    'application/json; charset=utf-16',
    'application/json; charset=UTF-16LE',
    'application/json; charset=latin1',
    'application/json;charset="ISO-8859-1"',
    'application/json; charset=us-ascii',
  ]) {
    it(`refuses a body declared as ${contentType} with 415`, async () => {
      const answer = await postPet(app, key, '{"name":"Rex","categoryId":1}', contentType);
      assert.equal(answer.status, 415, answer.text);
      assert.equal(errorOf(answer).code, 'unsupported_media_type');
      assert.match(errorOf(answer).message, /UTF-8/);
    });
  }

  it('accepts charset=utf-8 in any case, quoted or not, and no charset', async () => {
    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset="utf-8"',
    ]) {
      const answer = await postPet(app, key, '{"name":"Rex","categoryId":1}', contentType);
      assert.equal(answer.status, 201, `${contentType}: ${answer.text}`);
    }
  });

  it('quotes at most about 100 characters of huge input in every message', async () => {
    const huge = 'a'.repeat(12_000);
    const digits = '1'.repeat(12_000);
    const answers: [string, HttpAnswer][] = [
      ['unknown path', await request(app, `/v1/${huge}`, { key })],
      ['query value', await request(app, `/v1/pets?limit=${huge}`, { key })],
      ['path value', await request(app, `/v1/pets/${huge.slice(0, 90)}${digits.slice(0, 200)}`, { key })],
      [
        'Idempotency-Key',
        await request(app, '/v1/pets', {
          method: 'POST',
          key,
          body: '{"name":"Rex","categoryId":1}',
          headers: { 'content-type': 'application/json', 'idempotency-key': huge },
        }),
      ],
      ['content type', await postPet(app, key, '{}', `text/plain; x=${huge}`)],
      ['charset', await postPet(app, key, '{}', `application/json; charset=${huge}`)],
      ['categoryId digits', await postPet(app, key, `{"name":"Rex","categoryId":${digits}}`)],
      ['categoryId fraction', await postPet(app, key, `{"name":"Rex","categoryId":1.${digits.slice(0, 12_000)}}`)],
      ['field name', await postPet(app, key, `{"name":"Rex","categoryId":1,"${huge}":1}`)],
      ['name value', await postPet(app, key, `{"name":${digits.slice(0, 12_000)},"categoryId":1}`)],
    ];
    for (const [what, answer] of answers) {
      assert.ok(answer.status >= 400 && answer.status < 500, `${what}: ${answer.status}`);
      const error = errorOf(answer);
      assert.ok(error.message.length < 400, `${what}: a ${error.message.length}-character message`);
      assert.ok(answer.text.length < 500, `${what}: a ${answer.text.length}-byte body`);
    }
    const notFound = errorOf(answers[0]?.[1] as HttpAnswer);
    assert.match(notFound.message, /^no route for GET \/v1\/a+…$/);
  });

  it('answers an unsupported Expect with 417 expectation_failed and the Error body', async () => {
    const answer = await rawRequest(
      app,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: something\r\n\r\n`,
    );
    assert.equal(answer.status, 417, answer.text);
    assert.equal(rawError(answer).code, 'expectation_failed');
    assert.match(rawError(answer).message, /"something"/);
    // fetch refuses to send Expect: the answer is checked against the document here, which lists 417 everywhere.
    const body = '{"name":"Rex","categoryId":1}';
    const created = await rawRequest(
      app,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: something\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    assert.equal(created.status, 417, created.text);
    await assertDocumentedAnswer(app, 'POST', '/v1/pets', {
      status: created.status,
      headers: new Headers([...created.headers]),
      bodyText: created.text,
    });
  });

  for (const method of ['FOO', 'get', 'Post', 'GETX']) {
    it(`answers the unknown method ${method} with 501 method_not_implemented naming it, then closes`, async () => {
      const connection = new RawConnection(app.url);
      try {
        connection.write(`${method} /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
        const answer = await connection.next();
        assert.ok(answer, `${method} gets an answer`);
        assert.equal(answer.status, 501, answer.text);
        assert.deepEqual(rawError(answer), {
          code: 'method_not_implemented',
          message: `the method "${method}" is not implemented (methods are case-sensitive); use GET, HEAD or POST`,
          status: 501,
        });
        assert.ok(await connection.closedWithin(), 'the connection is closed');
      } finally {
        connection.close();
      }
    });
  }

  it('answers bytes that are no request line with 400 invalid_body, not 501', async () => {
    for (const garbage of ['GARBAGE\r\n\r\n', '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000']) {
      const answer = await rawRequest(app, garbage);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(rawError(answer).code, 'invalid_body');
    }
  });

  it('answers CONNECT with 405 and the Error body, then closes the connection', async () => {
    const connection = new RawConnection(app.url);
    try {
      connection.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      const answer = await connection.next();
      assert.ok(answer, 'CONNECT gets an answer');
      assert.equal(answer.status, 405);
      assert.equal(rawError(answer).code, 'method_not_allowed');
      assert.ok(answer.headers.has('allow'));
      assert.ok(await connection.closedWithin(), 'the connection is closed');
    } finally {
      connection.close();
    }
  });

  it('serves the reference page at /docs/static/index.html instead of a bodiless redirect', async () => {
    const answer = await request(app, '/docs/static/index.html');
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(answer.text, /<script src="\/docs\/static\/swagger-initializer\.js"/);
    const script = await request(app, '/docs/static/swagger-initializer.js');
    assert.equal(script.status, 200, 'its assets resolve from there');
  });

  for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'LOCK', 'PURGE', 'REPORT', 'MKCOL', 'PUT']) {
    it(`answers ${method} on a known path with 405 and Allow, after authentication`, async () => {
      const collection = await rawRequest(
        app,
        `${method} /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 0\r\n\r\n`,
      );
      assert.equal(collection.status, 405, collection.text);
      assert.equal(rawError(collection).code, 'method_not_allowed');
      assert.equal(collection.headers.get('allow'), 'GET, HEAD, POST');
      const item = await rawRequest(
        app,
        `${method} /v1/pets/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 0\r\n\r\n`,
      );
      assert.equal(item.status, 405, item.text);
      assert.equal(item.headers.get('allow'), 'GET, HEAD');
      const anonymous = await rawRequest(app, `${method} /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
      assert.equal(anonymous.status, 401, 'authentication comes first');
    });
  }
});

describeEachBackend('HTTP edge: 100 Continue only after authentication and limits', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 })));

  const body = '{"name":"Rex","categoryId":1}';
  const head = (authorization: string): string =>
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`;

  for (const [what, authorization] of [
    ['no key', ''],
    ['a malformed key', 'Authorization: Bearer nonsense\r\n'],
    ['an unknown key', `Authorization: Bearer ${generateApiKey()}\r\n`],
  ] as const) {
    it(`answers 401 without 100 Continue to ${what}`, async () => {
      const connection = new RawConnection(app.url);
      try {
        connection.write(head(authorization));
        const first = await connection.next();
        assert.ok(first, 'an answer without the body being sent');
        assert.equal(first.status, 401, `the first answer is ${first.status}`);
        assert.equal(rawError(first).code, 'unauthorized');
      } finally {
        connection.close();
      }
    });
  }

  it('sends 100 Continue to a valid key, then creates the pet from the body sent after it', async () => {
    const connection = new RawConnection(app.url);
    try {
      connection.write(head(`Authorization: Bearer ${key}\r\n`));
      const interim = await connection.next();
      assert.equal(interim?.status, 100);
      connection.write(body);
      const final = await connection.next();
      assert.equal(final?.status, 201, final?.text);
    } finally {
      connection.close();
    }
  });

  it('answers 429 without 100 Continue once the account is over its limit', async () => {
    const limited = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    assert.equal((await request(app, '/v1/pets', { key: limited.key })).status, 200);
    const connection = new RawConnection(app.url);
    try {
      connection.write(head(`Authorization: Bearer ${limited.key}\r\n`));
      const first = await connection.next();
      assert.equal(first?.status, 429, `the first answer is ${first?.status}`);
    } finally {
      connection.close();
    }
  });
});

describeEachBackend('HTTP edge: an address over its limit costs no key lookup', (backend) => {
  const app = appForSuite({ backend, clock: new ManualClock(MID), env: { ANON_LIMIT_PER_MINUTE: '3' } });

  it('answers 429 to a fresh well-formed key from an address over its limit without looking it up', async () => {
    // Counting calls around the store's method: the store is not what is under test here.
    const keys = app.services.store.keys;
    const original = keys.findPrincipalByHash.bind(keys);
    let lookups = 0;
    keys.findPrincipalByHash = (hash) => {
      lookups += 1;
      return original(hash);
    };
    const { key: known } = await app.newKey();
    assert.equal((await request(app, '/v1/pets', { key: known })).status, 200);
    // Past the key cache's lifetime (1 s), so the known key needs a lookup again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    try {
      lookups = 0;
      for (let i = 0; i < 3; i += 1) {
        const answer = await request(app, '/v1/pets', { key: generateApiKey() });
        assert.equal(answer.status, 401);
        assert.equal(answer.headers.get('x-ratelimit-remaining'), String(2 - i));
      }
      assert.equal(lookups, 3, 'within the limit, unknown keys are looked up');
      for (let i = 0; i < 5; i += 1) {
        const answer = await request(app, '/v1/pets', { key: generateApiKey() });
        assert.equal(answer.status, 429, answer.text);
        assert.equal(errorOf(answer).code, 'rate_limited');
        assert.ok(Number(answer.headers.get('retry-after')) >= 1);
        assert.equal(answer.headers.get('x-ratelimit-remaining'), '0');
        assert.equal(answer.headers.get('x-ratelimit-limit'), '3');
      }
      assert.equal(lookups, 3, 'over the limit, no key is looked up');
      const served = await request(app, '/v1/pets', { key: known });
      assert.equal(served.status, 200, 'a key this instance served before is still looked up and let through');
      assert.equal(served.headers.get('x-ratelimit-limit'), '60', 'and counted against its account');
      assert.equal(lookups, 4);
    } finally {
      keys.findPrincipalByHash = original;
    }
  });
});
