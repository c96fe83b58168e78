import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { request, type HttpAnswer, type Pet } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp } from '../support/test-app.ts';

/**
 * Conditional GETs (docs/api.md, Conditional requests and compression): a pet and a full page of
 * the list never change, so each carries a strong ETag, and If-None-Match with it answers 304 with
 * the headers of the 200 and no body. The last, partial page changes as pets are added: no ETag.
 * `request()` checks every 304 against the served document too.
 */

/** A full first page (more pets follow it) and the pet on it. */
const FULL_PAGE = '/v1/pets?limit=2';
const STRONG_TAG = /^"[A-Za-z0-9_-]+"$/;
/** Headers a 304 must repeat from the 200 of the same request. */
const REPEATED = ['etag', 'cache-control', 'link', 'x-ratelimit-limit', 'ratelimit-policy', 'vary'];
const REPEATED_ON_PET = [...REPEATED, 'deprecation', 'sunset'];

function etagOf(response: { readonly headers: Headers }): string {
  const etag = response.headers.get('etag');
  assert.ok(etag !== null, 'the answer carries an ETag');
  return etag;
}

function assertNotModified(response: HttpAnswer, like: HttpAnswer, names: readonly string[]): void {
  assert.equal(response.status, 304, response.text);
  assert.equal(response.text, '', 'a 304 has no body');
  assert.equal(response.headers.get('content-type'), null, 'a 304 describes no body');
  for (const name of names) assert.equal(response.headers.get(name), like.headers.get(name), `${name} as on the 200`);
  assert.match(response.headers.get('x-request-id') ?? '', /^[\x21-\x7e]{1,128}$/);
  assert.ok(response.headers.get('x-ratelimit-remaining') !== null, 'the rate-limit headers are there');
}

describeEachBackend('Conditional GET: ETag and If-None-Match', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  let petPath: string;

  before(async () => {
    ({ key } = await app.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 }));
    const ids: number[] = [];
    for (const name of ['Rex', 'Tom', 'Luna', 'Kit', 'Bo']) {
      const json = { name, categoryId: 3, status: 'available' };
      const created = await request(app, '/v1/pets', { method: 'POST', key, json });
      assert.equal(created.status, 201, created.text);
      ids.push(created.json<Pet>().id);
    }
    petPath = `/v1/pets/${ids[0]}`;
  });

  it('gives a pet and a full page a strong ETag, the same on every request', async () => {
    for (const path of [petPath, FULL_PAGE]) {
      const first = await request(app, path, { key });
      const second = await request(app, path, { key });
      assert.equal(first.status, 200, first.text);
      assert.match(etagOf(first), STRONG_TAG);
      assert.equal(etagOf(second), etagOf(first), `${path}: the same content, the same tag`);
      assert.equal(second.text, first.text);
    }
    assert.notEqual(etagOf(await request(app, petPath, { key })), etagOf(await request(app, FULL_PAGE, { key })));
  });

  it('gives the last, partial page no ETag, and ignores If-None-Match on it', async () => {
    const last = await request(app, '/v1/pets?limit=100', { key });
    assert.equal(last.status, 200);
    assert.equal(last.headers.get('link'), null, 'the last page');
    assert.equal(last.headers.get('etag'), null);
    for (const condition of ['*', etagOf(await request(app, FULL_PAGE, { key }))]) {
      const again = await request(app, '/v1/pets?limit=100', { key, headers: { 'if-none-match': condition } });
      assert.equal(again.status, 200, `If-None-Match: ${condition}`);
      assert.equal(again.text, last.text);
    }
  });

  it('answers 304 to an exact, weak, listed or * If-None-Match, with the headers of the 200', async () => {
    for (const [path, names] of [
      [petPath, REPEATED_ON_PET],
      [FULL_PAGE, REPEATED],
    ] as const) {
      const fresh = await request(app, path, { key });
      const etag = etagOf(fresh);
      for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, `W/"x",W/${etag} , "y"`, '*']) {
        const answer = await request(app, path, { key, headers: { 'if-none-match': condition } });
        assertNotModified(answer, fresh, names);
      }
    }
  });

  it('answers 200 with the body when If-None-Match names other content', async () => {
    const fresh = await request(app, petPath, { key });
    const pageTag = etagOf(await request(app, FULL_PAGE, { key }));
    for (const condition of [pageTag, '"nope"', etagOf(fresh).replace(/"$/, `x"`), 'garbage', '']) {
      const answer = await request(app, petPath, { key, headers: { 'if-none-match': condition } });
      assert.equal(answer.status, 200, `If-None-Match: ${condition}`);
      assert.equal(answer.text, fresh.text);
    }
  });

  it('echoes the request id on a 304', async () => {
    const etag = etagOf(await request(app, petPath, { key }));
    const answer = await request(app, petPath, { key, headers: { 'if-none-match': etag, 'x-request-id': 'cond-304' } });
    assert.equal(answer.status, 304);
    assert.equal(answer.headers.get('x-request-id'), 'cond-304');
  });

  it('counts a 304 in the rate-limit window like any other request', async () => {
    const limited = await app.newKey({ plan: 'enterprise', perMinute: 4, perDay: 1000 });
    const fresh = await request(app, petPath, { key: limited.key });
    assert.equal(fresh.headers.get('x-ratelimit-remaining'), '3');
    const headers = { 'if-none-match': etagOf(fresh) };
    const remaining = [];
    for (let i = 0; i < 3; i += 1) {
      const answer = await request(app, petPath, { key: limited.key, headers });
      assert.equal(answer.status, 304);
      remaining.push(answer.headers.get('x-ratelimit-remaining'));
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const refused = await request(app, petPath, { key: limited.key, headers });
    assert.equal(refused.status, 429, 'past the limit, even a match is refused');
  });

  it('answers HEAD like GET without a body, 304 included', async () => {
    const headKey = (await app.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 })).key;
    for (const path of [petPath, FULL_PAGE]) {
      const get = await request(app, path, { key });
      const head = await request(app, path, { method: 'HEAD', key: headKey });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers.get('etag'), etagOf(get));
      const conditional = { 'if-none-match': etagOf(get), authorization: `Bearer ${headKey}` };
      const notModified = await request(app, path, { method: 'HEAD', headers: conditional });
      assertNotModified(notModified, get, path === petPath ? REPEATED_ON_PET : REPEATED);
    }
  });

  it('counts the Content-Length of a pet in bytes, on GET and HEAD, fresh and cached', async () => {
    const json = { name: 'Zoë 🐕 ü'.repeat(20), categoryId: 3, status: 'available' };
    const created = await request(app, '/v1/pets', { method: 'POST', key, json });
    assert.equal(created.status, 201, created.text);
    const path = `/v1/pets/${created.json<Pet>().id}`;
    for (const attempt of ['first', 'cached']) {
      const get = await request(app, path, { key });
      assert.equal(get.json<Pet>().name, json.name, attempt);
      const bytes = String(Buffer.byteLength(get.text));
      assert.equal(get.headers.get('content-length'), bytes, `${attempt} GET`);
      const head = await request(app, path, { method: 'HEAD', key });
      assert.equal(head.headers.get('content-length'), bytes, `${attempt} HEAD`);
    }
  });

  it('gives the same tags on another instance over the same storage', async () => {
    const other = await startTestApp({ backend, env: { DATABASE_URL: app.services.config.databaseUrl } });
    try {
      const otherKey = (await other.newKey({ plan: 'business' })).key;
      for (const path of [petPath, FULL_PAGE]) {
        const here = await request(app, path, { key });
        const there = await request(other, path, { key: otherKey, headers: { 'if-none-match': etagOf(here) } });
        assertNotModified(there, here, ['etag', 'cache-control', 'vary']);
      }
    } finally {
      await other.close();
    }
  });
});
