import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { generateApiKey } from '../../src/auth/api-key.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { assertError, request, type HttpAnswer, type HttpTarget, type Pet } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/** Unauthenticated requests are limited per address; these tests send many on purpose. */
const ENV = { KEY_CACHE_TTL_MS: '0', ANON_LIMIT_PER_MINUTE: '100000' };

interface Operation {
  readonly name: string;
  send(app: HttpTarget, authorization: string | null): Promise<HttpAnswer>;
  readonly success: number;
}

function headersFor(authorization: string | null): { headers: Record<string, string> } {
  return { headers: authorization === null ? {} : { authorization } };
}

function operations(petId: () => number): Operation[] {
  return [
    {
      name: 'listPets',
      success: 200,
      send: (app, authorization) => request(app, '/v1/pets?limit=1', headersFor(authorization)),
    },
    {
      name: 'createPet',
      success: 201,
      send: (app, authorization) =>
        request(app, '/v1/pets', {
          method: 'POST',
          json: { name: 'auth-matrix', categoryId: 1 },
          ...headersFor(authorization),
        }),
    },
    {
      name: 'getPet',
      success: 200,
      send: (app, authorization) => request(app, `/v1/pets/${petId()}`, headersFor(authorization)),
    },
  ];
}

/** How many pets the app holds, following every next link. */
async function countPets(app: HttpTarget, key: string): Promise<number> {
  let count = 0;
  let path = '/v1/pets?limit=100';
  for (;;) {
    const page = await request(app, path, { key });
    assert.equal(page.status, 200, page.text);
    count += page.json<Pet[]>().length;
    const link = page.headers.get('link');
    if (link === null) return count;
    const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    assert.ok(next, `a next link, got ${link}`);
    path = next;
  }
  return count;
}

function assertUnauthorized(response: HttpAnswer, invalidToken: boolean): void {
  assertError(response, 401, 'unauthorized');
  const challenge = response.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer\b/, `WWW-Authenticate must start with Bearer, got ${JSON.stringify(challenge)}`);
  if (invalidToken) {
    assert.match(challenge, /error="invalid_token"/, 'RFC 6750: a presented but invalid token is invalid_token');
  } else {
    assert.doesNotMatch(challenge, /error=/, 'RFC 6750: no error code when no token was presented');
  }
}

describeEachBackend('authentication', (backend) => {
  const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));
  let app: TestApp;
  let valid: string;
  let pet: Pet;
  const ops = operations(() => pet.id);

  before(async () => {
    app = await startTestApp({ backend, clock, env: ENV });
    valid = (await app.newKey({ plan: 'business' })).key;
    const created = await request(app, '/v1/pets', {
      method: 'POST',
      key: valid,
      json: { name: 'auth', categoryId: 1 },
    });
    assert.equal(created.status, 201);
    pet = created.json<Pet>();
  });
  after(() => app.close());

  const lastCharChanged = (key: string): string => key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');

  const cases: Array<[label: string, header: () => string | null, invalidToken: boolean]> = [
    ['no Authorization header', () => null, false],
    ['the Basic scheme', () => 'Basic dXNlcjpwYXNz', false],
    ['a Basic scheme carrying a valid key', () => `Basic ${valid}`, false],
    ['an empty Bearer token', () => 'Bearer ', true],
    ['a bare Bearer', () => 'Bearer', true],
    ['a garbage token', () => 'Bearer garbage', true],
    ['a key without its prefix', () => `Bearer ${valid.slice(4)}`, true],
    ['a key with a wrong checksum', () => `Bearer ${lastCharChanged(valid)}`, true],
    ['a key with an extra character', () => `Bearer ${valid}x`, true],
    ['an unknown well-formed key', () => `Bearer ${generateApiKey()}`, true],
    ['the key without a scheme', () => valid, false],
  ];

  for (const operation of ops) {
    for (const [label, header, invalidToken] of cases) {
      it(`${operation.name}: ${label} → 401 unauthorized`, async () => {
        assertUnauthorized(await operation.send(app, header()), invalidToken);
      });
    }

    it(`${operation.name}: a revoked key → 401 unauthorized`, async () => {
      const { key, keyId } = await app.newKey();
      assert.equal((await operation.send(app, `Bearer ${key}`)).status, operation.success);
      await app.services.accounts.revokeKey(keyId);
      assertUnauthorized(await operation.send(app, `Bearer ${key}`), true);
    });

    it(`${operation.name}: an expired key → 401 unauthorized, and valid until then`, async () => {
      const { key } = await app.newKey({ expiresInMs: 60_000 });
      clock.advance(59_999);
      assert.equal((await operation.send(app, `Bearer ${key}`)).status, operation.success);
      clock.advance(1);
      const response = await operation.send(app, `Bearer ${key}`);
      assertUnauthorized(response, true);
      clock.advance(3_600_000);
      assertUnauthorized(await operation.send(app, `Bearer ${key}`), true);
    });

    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      it(`${operation.name}: the scheme ${scheme} is accepted`, async () => {
        const response = await operation.send(app, `${scheme} ${valid}`);
        assert.equal(response.status, operation.success, response.text);
      });
    }
  }

  it('creates no pet for an unauthenticated POST', async () => {
    const createPet = ops.find((operation) => operation.name === 'createPet');
    assert.ok(createPet);
    const before = await countPets(app, valid);
    for (const [label, header] of cases)
      assert.equal((await createPet.send(app, header())).status, 401, `${label} is refused`);
    assert.equal(await countPets(app, valid), before);
  });

  it('refuses an unauthenticated POST before reading its body (401, not 413 or 400)', async () => {
    const response = await request(app, '/v1/pets', { method: 'POST', json: 'x'.repeat(64 * 1024) });
    assertUnauthorized(response, false);
  });

  it('keeps the other keys of an account working when one is revoked', async () => {
    const first = await app.newKey();
    const second = await app.services.accounts.createKey(first.account);
    await app.services.accounts.revokeKey(first.keyId);
    assertUnauthorized(await request(app, '/v1/pets?limit=1', { key: first.key }), true);
    assert.equal((await request(app, '/v1/pets?limit=1', { key: second.key })).status, 200);
  });

  it('needs no key for the public endpoints, and ignores a bad one there', async () => {
    for (const authorization of [undefined, 'Bearer garbage', 'Basic abc']) {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const health = await request(app, '/healthz', { headers });
      assert.equal(health.status, 200);
      assert.deepEqual(health.json(), { status: 'ok' });

      const ready = await request(app, '/readyz', { headers });
      assert.equal(ready.status, 200);
      assert.equal(ready.json<{ status: string }>().status, 'ready');

      const document = await request(app, '/v1/openapi.json', { headers });
      assert.equal(document.status, 200);
      assert.match(document.json<{ openapi: string }>().openapi, /^3\.1\./);

      const docs = await request(app, '/docs/', { headers });
      assert.equal(docs.status, 200);
      assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    }
  });

  it('serves an OpenAPI 3.1 document of the operations, bearer security and the Error shape', async () => {
    const document = (await request(app, '/v1/openapi.json')).json<{
      openapi: string;
      security?: Array<Record<string, unknown>>;
      components: {
        securitySchemes?: Record<string, { type?: string; scheme?: string }>;
        schemas: Record<string, { required?: string[] }>;
      };
      paths: Record<
        string,
        Record<string, { operationId?: string; deprecated?: boolean; responses: Record<string, unknown> }>
      >;
    }>();
    assert.match(document.openapi, /^3\.1\./);
    const bearer = document.components.securitySchemes?.['bearerAuth'];
    assert.equal(bearer?.type, 'http');
    assert.match(bearer?.scheme ?? '', /^bearer$/i);
    assert.ok(
      document.security?.some((requirement) => 'bearerAuth' in requirement),
      'bearerAuth applies to the whole interface',
    );
    const expected: Array<[path: string, method: string, operationId: string, statuses: string[]]> = [
      ['/pets', 'get', 'listPets', ['200', '400', '401', '429']],
      ['/pets', 'post', 'createPet', ['201', '400', '401', '413', '415', '422', '429']],
      ['/pets/{petId}', 'get', 'getPet', ['200', '400', '401', '404', '410', '429']],
      ['/usage', 'get', 'getUsage', ['200', '401', '405', '429', '503']],
    ];
    for (const [path, method, operationId, statuses] of expected) {
      const operation = document.paths[path]?.[method];
      assert.equal(operation?.operationId, operationId);
      for (const status of statuses) assert.ok(operation?.responses[status], `${operationId} documents ${status}`);
    }
    assert.equal(document.paths['/pets/{petId}']?.['get']?.deprecated, true);
    assert.deepEqual(document.components.schemas['Error']?.required?.slice().sort(), ['code', 'message', 'status']);
    assert.deepEqual(document.components.schemas['Pet']?.required?.slice().sort(), ['categoryId', 'id', 'name']);
    assert.deepEqual(document.components.schemas['NewPet']?.required?.slice().sort(), ['categoryId', 'name']);
    assert.deepEqual(
      Object.keys(document.paths).sort(),
      ['/keys', '/keys/{keyId}/revoke', '/keys/{keyId}/roll', '/pets', '/pets/{petId}', '/usage', '/usage/history'],
      'nothing else is part of v1',
    );
  });

  it('serves the /docs page assets without a key and without the internet', async () => {
    const html = (await request(app, '/docs/')).text;
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    assert.ok(assets.length > 0);
    for (const asset of assets) {
      assert.doesNotMatch(asset, /^(https?:)?\/\//, `asset ${asset} must be served locally`);
      const { pathname, search } = new URL(asset, `${app.url}/docs/`);
      const response = await request(app, `${pathname}${search}`);
      assert.equal(response.status, 200, asset);
    }
  });
});

describeEachBackend('revocation with the default key cache', (backend) => {
  it('rejects a revoked key within one second', async () => {
    const app = await startTestApp({ backend, env: { ANON_LIMIT_PER_MINUTE: '100000' } });
    try {
      assert.equal(app.services.config.keyCacheTtlMs, 1000);
      const { key, keyId } = await app.newKey();
      assert.equal((await request(app, '/v1/pets', { key })).status, 200, 'the key is now cached');
      await app.services.accounts.revokeKey(keyId);
      const revokedAt = performance.now();
      await sleep(1100);
      assertUnauthorized(await request(app, '/v1/pets', { key }), true);
      assert.ok(performance.now() - revokedAt < 2000);
    } finally {
      await app.close();
    }
  });
});
