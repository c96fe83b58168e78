import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer, type HttpTarget, type Pet } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp } from '../support/test-app.ts';

const STATUSES = ['available', 'pending', 'sold', undefined] as const;

/** The URL of a `Link: <…>; rel="next"` header, or undefined when there is none. */
function nextLink(response: HttpAnswer): string | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(header);
  assert.ok(match, `Link header must be exactly <…>; rel="next", got ${JSON.stringify(header)}`);
  return match[1];
}

/** A path relative to the app, from a (relative or absolute) Link URL. */
function pathOf(link: string): string {
  const url = new URL(link, 'http://placeholder.invalid');
  return url.pathname + url.search;
}

async function createPets(app: HttpTarget, key: string, count: number, prefix: string): Promise<Pet[]> {
  const created: Pet[] = [];
  // Sequential, so ids follow creation order and statuses cycle predictably.
  for (let i = 0; i < count; i += 1) {
    const status = STATUSES[i % STATUSES.length];
    const body =
      status === undefined
        ? { name: `${prefix}-${i}`, categoryId: i }
        : { name: `${prefix}-${i}`, categoryId: i, status };
    const response = await request(app, '/v1/pets', { method: 'POST', key, json: body });
    assert.equal(response.status, 201, response.text);
    created.push(response.json<Pet>());
  }
  return created;
}

/** Follows next links from `firstPath` to the end; returns every page. */
async function walk(app: HttpTarget, key: string, firstPath: string): Promise<HttpAnswer[]> {
  const pages: HttpAnswer[] = [];
  let path: string | undefined = firstPath;
  while (path !== undefined) {
    const page = await request(app, path, { key });
    assert.equal(page.status, 200, page.text);
    pages.push(page);
    const link = nextLink(page);
    path = link === undefined ? undefined : pathOf(link);
    assert.ok(pages.length < 100, 'pagination must end');
  }
  return pages;
}

describeEachBackend('GET /v1/pets: validation and basics', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'business' })));

  it('returns a created pet with exactly its fields, as a plain JSON array', async () => {
    const created = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      json: { name: 'Rex', categoryId: 7, status: 'available' },
    });
    assert.equal(created.status, 201, created.text);
    const pet = created.json<Pet>();
    const list = await request(app, '/v1/pets?limit=100', { key });
    assert.equal(list.status, 200);
    assert.match(list.headers.get('content-type') ?? '', /^application\/json/);
    const body = list.json<Pet[]>();
    assert.ok(Array.isArray(body));
    assert.deepEqual(
      body.find((candidate) => candidate.id === pet.id),
      { id: pet.id, name: 'Rex', categoryId: 7, status: 'available' },
    );
  });

  for (const [query, label] of [
    ['limit=0', 'limit 0'],
    ['limit=101', 'limit 101'],
    ['limit=-1', 'negative limit'],
    ['limit=abc', 'non-numeric limit'],
    ['limit=0x10', 'hexadecimal limit'],
    ['limit=1.5', 'fractional limit'],
    ['limit=1e1', 'exponent limit'],
    ['limit=', 'empty limit'],
    ['limit=%205', 'limit with a space'],
    ['limit=99999999999999999999', 'limit beyond int64'],
  ] as const) {
    it(`refuses ${label} (${query}) with 400 invalid_query naming limit`, async () => {
      assertError(await request(app, `/v1/pets?${query}`, { key }), 400, 'invalid_query', 'limit');
    });
  }

  it('accepts the bounds 1 and 100', async () => {
    for (let i = 0; i < 2; i += 1) {
      const json = { name: `bound-${i}`, categoryId: i };
      assert.equal((await request(app, '/v1/pets', { method: 'POST', key, json })).status, 201);
    }
    const total = (await walk(app, key, '/v1/pets?limit=7')).flatMap((page) => page.json<Pet[]>()).length;
    for (const limit of [1, 100]) {
      const response = await request(app, `/v1/pets?limit=${limit}`, { key });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.json<Pet[]>().length, Math.min(limit, total), `limit=${limit} of ${total} pets`);
    }
  });

  it('refuses a repeated limit or a repeated status with 400 invalid_query naming it', async () => {
    assertError(await request(app, '/v1/pets?limit=1&limit=2', { key }), 400, 'invalid_query', 'limit');
    assertError(await request(app, '/v1/pets?limit=5&limit=5', { key }), 400, 'invalid_query', 'limit');
    assertError(await request(app, '/v1/pets?status=sold&status=pending', { key }), 400, 'invalid_query', 'status');
    assertError(await request(app, '/v1/pets?status=sold&status=sold', { key }), 400, 'invalid_query', 'status');
  });

  it('refuses an unknown status with 400 invalid_query naming status', async () => {
    for (const status of ['bad', 'SOLD', 'Available', '', 'sold%20']) {
      assertError(await request(app, `/v1/pets?status=${status}`, { key }), 400, 'invalid_query', 'status');
    }
  });

  it('refuses unknown query parameters, naming them', async () => {
    const withUnknown = await request(
      app,
      '/v1/pets?limit=5&foo=bar&page=3&offset=2&sort=desc&__proto__=x&constructor=y',
      { key },
    );
    assertError(
      withUnknown,
      400,
      'invalid_query',
      "unknown query parameters 'foo', 'page', 'offset', 'sort', '__proto__', 'constructor'",
      'this operation takes limit, status, cursor',
    );
  });

  it('refuses malformed cursors with 400 invalid_query naming cursor', async () => {
    for (let i = 0; i < 3; i += 1) {
      const json = { name: `cursor-${i}`, categoryId: i };
      assert.equal((await request(app, '/v1/pets', { method: 'POST', key, json })).status, 201);
    }
    const first = await request(app, '/v1/pets?limit=1', { key });
    const link = nextLink(first);
    assert.ok(link, 'a first page of 1 with more pets carries a next link');
    const cursor = new URL(link, 'http://placeholder.invalid').searchParams.get('cursor');
    assert.ok(cursor);
    const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
    // Cursors are opaque, not signed: a flip that still decodes to a valid position may be accepted,
    // so the tampering here always breaks the encoding or the versioned format.
    const flipped = `${cursor.slice(0, -1)}_`;
    const tampered = [
      'garbage',
      '%%%',
      'not-base64!',
      flipped,
      `${cursor}==`,
      `${cursor}x`,
      Buffer.from(decoded.replace(/\d+$/, 'abc')).toString('base64url'),
      Buffer.from(decoded.replace(/^p1/, 'p2')).toString('base64url'),
      Buffer.from('p1.-5').toString('base64url'),
      Buffer.from('p1.99999999999999999999').toString('base64url'),
      Buffer.from('{"lastId":1}').toString('base64url'),
      Buffer.from(`${decoded} `).toString('base64url'),
      Buffer.from(`${decoded}\n`).toString('base64url'),
      'A'.repeat(65),
      '\u0000',
      `${cursor}\u0001`,
    ];
    for (const bad of tampered) {
      const response = await request(app, `/v1/pets?limit=1&cursor=${encodeURIComponent(bad)}`, { key });
      assert.equal(response.status, 400, `cursor ${JSON.stringify(bad)} (real one: ${cursor}) must be refused`);
      assertError(response, 400, 'invalid_query', 'cursor');
    }
    assertError(await request(app, '/v1/pets?cursor=', { key }), 400, 'invalid_query', 'cursor');
    assertError(
      await request(app, `/v1/pets?cursor=${cursor}&cursor=${cursor}`, { key }),
      400,
      'invalid_query',
      'cursor',
    );
    // The untouched cursor still works.
    assert.equal((await request(app, `/v1/pets?limit=1&cursor=${cursor}`, { key })).status, 200);
  });

  it('uses absolute Link URLs when PUBLIC_BASE_URL is set', async () => {
    const other = await startTestApp({ backend, env: { PUBLIC_BASE_URL: 'https://api.example.test' } });
    try {
      const { key: otherKey } = await other.newKey({ plan: 'business' });
      for (let i = 0; i < 3; i += 1) {
        const json = { name: `abs-${i}`, categoryId: i, status: 'available' };
        assert.equal((await request(other, '/v1/pets', { method: 'POST', key: otherKey, json })).status, 201);
      }
      const page = await request(other, '/v1/pets?limit=2&status=available', { key: otherKey });
      const link = nextLink(page);
      assert.ok(link);
      const url = new URL(link);
      assert.equal(url.origin, 'https://api.example.test');
      assert.equal(url.pathname, '/v1/pets');
      assert.equal(url.searchParams.get('limit'), '2');
      assert.equal(url.searchParams.get('status'), 'available');
      assert.equal(url.searchParams.has('extra'), false, 'unknown parameters are not repeated');
    } finally {
      await other.close();
    }
  });
});

describeEachBackend('GET /v1/pets: ordering and pagination over 47 pets', (backend) => {
  // Its own app: the walk must see exactly these pets and no others.
  const app = appForSuite({ backend });
  let key: string;
  let pets: Pet[];

  before(async () => {
    ({ key } = await app.newKey({ plan: 'business' }));
    pets = await createPets(app, key, 47, 'page');
  });

  it('defaults to 20 pets, in ascending id order, with a next link repeating limit=20', async () => {
    const response = await request(app, '/v1/pets', { key });
    const body = response.json<Pet[]>();
    assert.equal(body.length, 20);
    assert.deepEqual(
      body.map((pet) => pet.id),
      pets.slice(0, 20).map((pet) => pet.id),
    );
    const link = nextLink(response);
    assert.ok(link);
    const url = new URL(link, 'http://placeholder.invalid');
    assert.equal(url.pathname, '/v1/pets');
    assert.equal(url.searchParams.get('limit'), '20');
    assert.ok(url.searchParams.get('cursor'));
  });

  it('keeps ids strictly ascending and positive', async () => {
    const ids = (await request(app, '/v1/pets?limit=100', { key })).json<Pet[]>().map((pet) => pet.id);
    assert.equal(ids.length, 47);
    ids.forEach((id, index) => {
      assert.ok(Number.isSafeInteger(id) && id > 0);
      if (index > 0) assert.ok(id > (ids[index - 1] ?? 0), 'ascending ids');
    });
  });

  it('returns everything on one page, without a next link, when limit covers it', async () => {
    const response = await request(app, '/v1/pets?limit=100', { key });
    assert.equal(response.json<Pet[]>().length, 47);
    assert.equal(response.headers.get('link'), null);
    assert.equal(
      nextLink(await request(app, '/v1/pets?limit=47', { key })),
      undefined,
      'exactly as many pets as the limit: no next link',
    );
  });

  it('walks every pet exactly once with limit=10, the last page without a link', async () => {
    const pages = await walk(app, key, '/v1/pets?limit=10');
    assert.deepEqual(
      pages.map((page) => page.json<Pet[]>().length),
      [10, 10, 10, 10, 7],
    );
    for (const page of pages.slice(0, -1)) {
      const url = new URL(nextLink(page) ?? '', 'http://placeholder.invalid');
      assert.equal(url.searchParams.get('limit'), '10');
      assert.equal(url.searchParams.has('status'), false);
    }
    assert.equal(pages.at(-1)?.headers.get('link'), null);
    const seen = pages.flatMap((page) => page.json<Pet[]>());
    assert.deepEqual(seen, pets, 'every pet once, in creation (= id) order, with the same fields');
  });

  it('walks a status filter, repeating status and limit in every link', async () => {
    for (const status of ['available', 'pending', 'sold'] as const) {
      const expected = pets.filter((pet) => pet.status === status);
      assert.equal(expected.length, 12);
      const pages = await walk(app, key, `/v1/pets?status=${status}&limit=5`);
      assert.deepEqual(
        pages.map((page) => page.json<Pet[]>().length),
        [5, 5, 2],
      );
      for (const page of pages.slice(0, -1)) {
        const link = nextLink(page);
        assert.ok(link);
        const url = new URL(link, 'http://placeholder.invalid');
        assert.equal(url.searchParams.get('status'), status);
        assert.equal(url.searchParams.get('limit'), '5');
        assert.ok(url.searchParams.get('cursor'));
      }
      assert.equal(pages.at(-1)?.headers.get('link'), null);
      assert.deepEqual(
        pages.flatMap((page) => page.json<Pet[]>()),
        expected,
      );
    }
  });

  it('ends a filtered walk whose count is a multiple of the limit without an empty page', async () => {
    const pages = await walk(app, key, '/v1/pets?status=sold&limit=6');
    assert.deepEqual(
      pages.map((page) => page.json<Pet[]>().length),
      [6, 6],
    );
    assert.equal(pages.at(-1)?.headers.get('link'), null);
  });
});

describeEachBackend('GET /v1/pets: pagination while pets are created', (backend) => {
  const app = appForSuite({ backend });

  it('does not shift or repeat pages when pets are created during the walk', async () => {
    const { key } = await app.newKey({ plan: 'business' });
    const pets = await createPets(app, key, 25, 'walk');
    const first = await request(app, '/v1/pets?limit=10', { key });
    const link = nextLink(first);
    assert.ok(link);
    const extra = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      json: { name: 'late', categoryId: 1, status: 'available' },
    });
    assert.equal(extra.status, 201);
    const rest = await walk(app, key, pathOf(link));
    const seen = [...first.json<Pet[]>(), ...rest.flatMap((page) => page.json<Pet[]>())];
    assert.deepEqual(
      seen.map((pet) => pet.id),
      [...pets.map((pet) => pet.id), extra.json<Pet>().id],
    );
  });
});
