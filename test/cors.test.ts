import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * Cross-origin access (decisions.md, "Rate limits"; README, CORS_ORIGINS): off by default; with a
 * list of allowed origins, preflights are answered without a key, and browsers may read the
 * rate-limit headers, Retry-After, Link, Deprecation and Sunset.
 */

const ORIGIN = 'https://app.example';
const EXPOSED = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Link',
  'Deprecation',
  'Sunset',
];
const ALLOWED_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key'];

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function call(
  app: TestApp,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await fetch(`${app.url}${path}`, { method: init.method ?? 'GET', headers: init.headers ?? {} });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

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

function preflight(app: TestApp, origin: string, path = '/v1/pets'): Promise<Answer> {
  return call(app, path, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, idempotency-key',
    },
  });
}

describe('CORS off by default', () => {
  let app: TestApp;
  let key: string;

  before(async () => {
    app = await startTestApp();
    key = (await app.newKey()).key;
  });
  after(() => app.close());

  it('answers no Access-Control-* header to a request with an Origin', async () => {
    const answer = await call(app, '/v1/pets', { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(corsHeaders(answer.headers), []);
  });

  it('answers no Access-Control-* header to a preflight (which is not authenticated)', async () => {
    const answer = await preflight(app, ORIGIN);
    assert.notEqual(answer.status, 204, 'no preflight is answered when CORS is off');
    assert.deepEqual(corsHeaders(answer.headers), []);
  });
});

describe('CORS with CORS_ORIGINS', () => {
  let app: TestApp;
  let key: string;
  let petId: number;

  before(async () => {
    // A low per-address limit shows that preflights (which carry no key) are not counted against it.
    app = await startTestApp({ env: { CORS_ORIGINS: `${ORIGIN}, https://admin.example`, ANON_LIMIT_PER_MINUTE: '2' } });
    key = (await app.newKey({ plan: 'enterprise', perMinute: 5, perDay: 1000 })).key;
    const created = await fetch(`${app.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cors', categoryId: 1 }),
    });
    assert.equal(created.status, 201);
    petId = ((await created.json()) as { id: number }).id;
  });
  after(() => app.close());

  it('answers a preflight without a key: 204, the origin, and the request headers a client sends', async () => {
    for (const origin of [ORIGIN, 'https://admin.example']) {
      const answer = await preflight(app, origin);
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      const allowed = listOf(answer.headers, 'access-control-allow-headers');
      for (const header of ALLOWED_REQUEST_HEADERS)
        assert.ok(
          allowed.has(header.toLowerCase()),
          `Access-Control-Allow-Headers allows ${header}: ${[...allowed].join(', ')}`,
        );
      const methods = listOf(answer.headers, 'access-control-allow-methods');
      assert.ok(
        methods.has('post') && methods.has('get'),
        `Access-Control-Allow-Methods allows GET and POST: ${[...methods].join(', ')}`,
      );
      assert.ok(listOf(answer.headers, 'vary').has('origin'), 'Vary: Origin, so caches keep one answer per origin');
    }
  });

  it('does not count preflights against the limit for requests without a key', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => preflight(app, ORIGIN)));
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [204, 204, 204, 204, 204],
    );
  });

  it('answers a preflight for GET /v1/pets/{petId} too', async () => {
    const answer = await call(app, `/v1/pets/${petId}`, {
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

  it('lets the browser read the rate-limit, Link, Deprecation and Sunset headers of an actual request', async () => {
    for (const path of ['/v1/pets?limit=1', `/v1/pets/${petId}`]) {
      const answer = await call(app, path, { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('access-control-allow-origin'), ORIGIN);
      const exposed = listOf(answer.headers, 'access-control-expose-headers');
      for (const header of EXPOSED)
        assert.ok(
          exposed.has(header.toLowerCase()),
          `Access-Control-Expose-Headers lists ${header}: ${[...exposed].join(', ')}`,
        );
      assert.ok(answer.headers.get('x-ratelimit-limit') !== null);
    }
  });

  it('lets the browser read errors: a 401 without a key and a 429 with Retry-After', async () => {
    const unauthorized = await call(app, '/v1/pets', { headers: { origin: ORIGIN } });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers.get('access-control-allow-origin'), ORIGIN);
    let limited: Answer | undefined;
    for (let attempt = 0; attempt < 10 && limited === undefined; attempt += 1) {
      const answer = await call(app, '/v1/pets', { headers: { origin: ORIGIN, authorization: `Bearer ${key}` } });
      if (answer.status === 429) limited = answer;
    }
    assert.ok(limited, 'the enterprise limit of 5 per minute is reached');
    assert.equal(limited.headers.get('access-control-allow-origin'), ORIGIN);
    assert.ok(listOf(limited.headers, 'access-control-expose-headers').has('retry-after'));
    assert.ok(limited.headers.get('retry-after') !== null);
  });

  it('gives an origin that is not on the list no Access-Control-Allow-Origin', async () => {
    for (const origin of ['https://evil.example', 'http://app.example', 'https://app.example.evil.example']) {
      const answer = await call(app, '/v1/pets', { headers: { origin, authorization: `Bearer ${key}` } });
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
