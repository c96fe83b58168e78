import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { RATE_LIMIT_HEADERS } from '../ratelimit/rate-limit-assertions.ts';

/**
 * Cross-origin access (README, CORS_ORIGINS): off by default; with a
 * list of allowed origins, preflights are answered without a key, browsers may send X-Request-Id
 * and If-None-Match, and read the rate-limit headers, Retry-After, Link, Deprecation, Sunset and
 * ETag. Browsers keep a preflight's answer for CORS_MAX_AGE_SECONDS (docs/operations.md).
 */

const ORIGIN = 'https://app.example';
const EXPOSED = [...RATE_LIMIT_HEADERS, 'Link', 'Deprecation', 'Sunset', 'X-Request-Id', 'ETag'];
const ALLOWED_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'];

function corsHeaders(headers: Headers): string[] {
  return [...headers.keys()].filter((name) => name.toLowerCase().startsWith('access-control-'));
}

/** A comma-separated header value as a lower-case set. */
function listOf(headers: Headers, name: string): Set<string> {
  return new Set(
    (headers.get(name) ?? '')
      .split(',')
      .map((item) => item.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** The comma-separated header `name` lists each of `expected`, in any case. */
function assertLists(headers: Headers, name: string, expected: readonly string[]): void {
  const listed = listOf(headers, name);
  for (const item of expected)
    assert.ok(listed.has(item.toLowerCase()), `${name} lists ${item}: ${[...listed].join(', ')}`);
}

function preflight(app: TestApp, origin: string, from: Record<string, string> = {}): Promise<HttpAnswer> {
  return request(app, '/v1/pets', {
    method: 'OPTIONS',
    headers: {
      ...from,
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key',
    },
  });
}

describe('CORS off by default', () => {
  const app = appForSuite();
  let key: string;
  before(async () => ({ key } = await app.newKey()));

  it('answers no Access-Control-* header to a request with an Origin', async () => {
    const answer = await request(app, '/v1/pets', { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(corsHeaders(answer.headers), []);
  });

  it('answers no Access-Control-* header to a preflight (which is not authenticated)', async () => {
    const answer = await preflight(app, ORIGIN);
    assert.equal(answer.status, 401, 'with CORS off, a preflight is an ordinary request without a key');
    assert.deepEqual(corsHeaders(answer.headers), []);
  });
});

describe('CORS with CORS_ORIGINS', () => {
  // A low per-address limit shows that preflights (which carry no key) are not counted against it.
  const app = appForSuite({
    env: { CORS_ORIGINS: `${ORIGIN}, https://admin.example`, ANON_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' },
  });
  let petId: number;

  /** A key of a fresh account allowed `perMinute` requests a minute. */
  async function newKey(perMinute = 60): Promise<string> {
    return (await app.newKey({ plan: 'enterprise', perMinute, perDay: 1000 })).key;
  }

  /** Requests from their own client address, so each test has a per-address window of its own. */
  const fromAddress = (address: string): Record<string, string> => ({ 'x-forwarded-for': address });

  before(async () => {
    const key = await newKey();
    const created = await request(app, '/v1/pets', { method: 'POST', key, json: { name: 'cors', categoryId: 1 } });
    assert.equal(created.status, 201);
    petId = created.json<{ id: number }>().id;
  });

  it('answers a preflight without a key: 204, the origin, and the request headers a client sends', async () => {
    for (const origin of [ORIGIN, 'https://admin.example']) {
      const answer = await preflight(app, origin);
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      assertLists(answer.headers, 'Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
      assertLists(answer.headers, 'Access-Control-Allow-Methods', ['GET', 'POST']);
      assert.ok(listOf(answer.headers, 'vary').has('origin'), 'Vary: Origin, so caches keep one answer per origin');
      assert.equal(answer.headers.get('access-control-max-age'), '600', 'kept by the browser for 10 minutes');
    }
  });

  it('gives Access-Control-Max-Age to preflights only', async () => {
    const answer = await request(app, '/v1/pets', {
      headers: { origin: ORIGIN, authorization: `Bearer ${await newKey()}` },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(answer.headers.get('access-control-max-age'), null);
  });

  it('does not count preflights against the limit for requests without a key', async () => {
    const from = fromAddress('192.0.2.20');
    const answers = await Promise.all(Array.from({ length: 5 }, () => preflight(app, ORIGIN, from)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [204, 204, 204, 204, 204],
    );
    // The limit of 2 is still untouched: two requests without a key are answered 401, the third 429.
    const anonymous = [];
    for (let i = 0; i < 3; i += 1)
      anonymous.push(await request(app, '/v1/pets', { headers: { ...from, origin: ORIGIN } }));
    assert.deepEqual(
      anonymous.map((answer) => answer.status),
      [401, 401, 429],
    );
  });

  it('answers an OPTIONS that is not a preflight as an ordinary request: 401, or 405 with Allow', async () => {
    const key = await newKey();
    const incomplete: Array<Record<string, string>> = [
      {},
      { origin: ORIGIN },
      { 'access-control-request-method': 'POST' },
      { origin: ORIGIN, 'access-control-request-headers': 'authorization' },
    ];
    for (const [index, headers] of incomplete.entries()) {
      const shown = JSON.stringify(headers);
      const anonymous = await request(app, '/v1/pets', {
        method: 'OPTIONS',
        headers: { ...headers, ...fromAddress(`192.0.2.${30 + index}`) },
      });
      assertError(anonymous, 401, 'unauthorized');
      const answer = await request(app, '/v1/pets', {
        method: 'OPTIONS',
        headers: { ...headers, authorization: `Bearer ${key}` },
      });
      assertError(answer, 405, 'method_not_allowed');
      assert.equal(answer.headers.get('allow'), 'GET, HEAD, POST', shown);
      assert.equal(answer.headers.get('access-control-allow-methods'), null, `${shown}: not a preflight answer`);
      if (headers.origin !== undefined)
        assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN, `${shown}: readable by the browser`);
    }
  });

  it('answers a preflight for GET /v1/pets/{petId} too', async () => {
    const answer = await request(app, `/v1/pets/${petId}`, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(answer.status, 204, answer.text);
    assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN);
  });

  it('allows a conditional GET with its own request id from the browser: preflight, ETag, 304', async () => {
    const path = `/v1/pets/${petId}`;
    const allowed = await request(app, path, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, if-none-match, x-request-id',
      },
    });
    assert.equal(allowed.status, 204, allowed.text);
    const allowedHeaders = listOf(allowed.headers, 'access-control-allow-headers');
    for (const header of ['if-none-match', 'x-request-id']) assert.ok(allowedHeaders.has(header), header);
    const headers = { origin: ORIGIN, authorization: `Bearer ${await newKey()}`, 'x-request-id': 'from-browser' };
    const fresh = await request(app, path, { headers });
    const etag = fresh.headers.get('etag');
    assert.ok(etag, 'the pet has an ETag');
    assert.ok(listOf(fresh.headers, 'access-control-expose-headers').has('etag'), 'the browser may read it');
    const notModified = await request(app, path, { headers: { ...headers, 'if-none-match': etag } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.get('access-control-allow-origin'), ORIGIN);
    assert.equal(notModified.headers.get('x-request-id'), 'from-browser');
  });

  it('lets the browser read the rate-limit, Link, Deprecation, Sunset and request id of a request', async () => {
    const key = await newKey();
    for (const path of ['/v1/pets?limit=1', `/v1/pets/${petId}`]) {
      const answer = await request(app, path, { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN);
      assertLists(answer.headers, 'Access-Control-Expose-Headers', EXPOSED);
      assert.equal(answer.headers.get('x-ratelimit-limit'), '60');
    }
  });

  it('lets the browser read errors: a 401 without a key and a 429 with Retry-After', async () => {
    const unauthorized = await request(app, '/v1/pets', { headers: { ...fromAddress('192.0.2.21'), origin: ORIGIN } });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers.get('access-control-allow-origin'), ORIGIN);
    assert.ok(listOf(unauthorized.headers, 'access-control-expose-headers').has('x-ratelimit-remaining'));
    const key = await newKey(1);
    const headers = { origin: ORIGIN, authorization: `Bearer ${key}` };
    assert.equal((await request(app, '/v1/pets', { headers })).status, 200);
    const limited = await request(app, '/v1/pets', { headers });
    assert.equal(limited.status, 429, limited.text);
    assert.equal(limited.headers.get('access-control-allow-origin'), ORIGIN);
    assert.ok(listOf(limited.headers, 'access-control-expose-headers').has('retry-after'));
    assert.match(limited.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
  });

  it('gives an origin that is not on the list no Access-Control-Allow-Origin', async () => {
    const key = await newKey();
    for (const origin of ['https://evil.example', 'http://app.example', 'https://app.example.evil.example']) {
      const answer = await request(app, '/v1/pets', { headers: { origin, authorization: `Bearer ${key}` } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('access-control-allow-origin'), null, `${origin} is not allowed`);
      const refusedPreflight = await preflight(app, origin);
      assert.equal(
        refusedPreflight.headers.get('access-control-allow-origin'),
        null,
        `a preflight from ${origin} is not allowed`,
      );
    }
  });
});

describe('CORS_MAX_AGE_SECONDS', () => {
  for (const seconds of ['7200', '0']) {
    it(`sets Access-Control-Max-Age: ${seconds} on preflights`, async (t) => {
      const app = await startTestApp({ env: { CORS_ORIGINS: ORIGIN, CORS_MAX_AGE_SECONDS: seconds } });
      t.after(() => app.close());
      const answer = await preflight(app, ORIGIN);
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.headers.get('access-control-max-age'), seconds);
    });
  }

  for (const [value, problem] of [
    ['ten', 'must be a whole number in decimal digits'],
    ['1.5', 'must be a whole number in decimal digits'],
    ['-1', 'must be >= 0'],
    ['86401', 'must be <= 86400'],
  ] as const) {
    it(`stops start-up with one line naming it when it is ${JSON.stringify(value)}`, () => {
      assert.throws(
        () => loadConfig({ CORS_ORIGINS: ORIGIN, CORS_MAX_AGE_SECONDS: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === `invalid configuration: CORS_MAX_AGE_SECONDS ${problem} (got ${JSON.stringify(value)})`,
      );
    });
  }
});
