import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describeEachBackend } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import type { TestApp } from '../support/test-app.ts';

/**
 * Compression (docs/api.md, Conditional requests and compression): bodies of 1 KB or more go out
 * as br or gzip when Accept-Encoding allows it, with Vary: Accept-Encoding whether compressed or
 * not, and decode to exactly the bytes sent uncompressed; smaller bodies never vary by it. Read
 * over raw HTTP: fetch would decode them itself.
 */

interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function raw(
  app: TestApp,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: hostname, port, path, method, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }),
      );
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The body decoded by its Content-Encoding, checked against Content-Length. */
function decoded(answer: RawAnswer): Buffer {
  assert.equal(Number(answer.headers['content-length']), answer.body.length, 'Content-Length is the bytes sent');
  const coding = answer.headers['content-encoding'];
  if (coding === undefined) return answer.body;
  if (coding === 'gzip') return gunzipSync(answer.body);
  assert.equal(coding, 'br');
  return brotliDecompressSync(answer.body);
}

function varies(answer: RawAnswer): boolean {
  return /(^|,)\s*accept-encoding\s*(,|$)/i.test(String(answer.headers.vary ?? ''));
}

/** Checks that `path` answers the same content as identity, gzip and br; returns the three answers. */
async function assertCodings(app: TestApp, path: string, headers: Record<string, string> = {}) {
  const identity = await raw(app, path, headers);
  assert.equal(identity.status, 200, identity.body.toString());
  assert.equal(identity.headers['content-encoding'], undefined, 'no Accept-Encoding: sent as it is');
  assert.ok(identity.body.length >= 1024, `${path} is large enough to compress (${identity.body.length} B)`);
  const answers = { identity, gzip: identity, br: identity };
  for (const coding of ['gzip', 'br'] as const) {
    const answer = await raw(app, path, { ...headers, 'accept-encoding': coding });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-encoding'], coding, `${path} in ${coding}`);
    assert.ok(answer.body.length < identity.body.length / 2, `${path}: ${coding} is smaller`);
    assert.deepEqual(decoded(answer), identity.body, `${path}: ${coding} decodes to exactly the identity bytes`);
    assert.equal(answer.headers['content-type'], identity.headers['content-type']);
    answers[coding] = answer;
  }
  for (const answer of Object.values(answers)) assert.ok(varies(answer), `${path}: Vary: Accept-Encoding`);
  return answers;
}

describeEachBackend('Compression of pets and pages', (backend) => {
  const app = appForSuite({ backend });
  let key: Record<string, string>;
  let petPath: string;

  before(async () => {
    const created = await app.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
    key = { authorization: `Bearer ${created.key}` };
    const now = Date.now();
    for (let i = 1; i <= 130; i += 1) {
      const status = (['available', 'pending', 'sold'] as const)[i % 3] ?? null;
      await app.services.store.pets.create({ name: `Pet number ${i}`, categoryId: BigInt(i % 7), status }, now);
    }
    petPath = '/v1/pets/1';
  });

  it('sends a 100-pet page as gzip and br that decode to its exact bytes, each with its own ETag', async () => {
    const { identity, gzip, br } = await assertCodings(app, '/v1/pets?limit=100', key);
    const tag = String(identity.headers.etag);
    assert.match(tag, /^"[A-Za-z0-9_-]+"$/);
    assert.equal(gzip.headers.etag, tag.replace(/"$/, '-gzip"'));
    assert.equal(br.headers.etag, tag.replace(/"$/, '-br"'));
    const again = await raw(app, '/v1/pets?limit=100', { ...key, 'accept-encoding': 'br' });
    assert.deepEqual(again.body, br.body, 'the kept bytes are sent again');
  });

  it('matches If-None-Match with the ETag of any coding of the same page', async () => {
    const { identity, gzip, br } = await assertCodings(app, '/v1/pets?limit=100', key);
    for (const [held, asking, expected] of [
      [gzip, {}, identity],
      [identity, { 'accept-encoding': 'br' }, br],
      [br, { 'accept-encoding': 'gzip' }, gzip],
    ] as const) {
      const condition = { ...key, ...asking, 'if-none-match': String(held.headers.etag) };
      const answer = await raw(app, '/v1/pets?limit=100', condition);
      assert.equal(answer.status, 304);
      assert.equal(answer.body.length, 0);
      assert.equal(answer.headers.etag, expected.headers.etag, 'the tag of the coding the 200 would have used');
      assert.equal(answer.headers['content-encoding'], undefined);
      assert.ok(varies(answer));
    }
  });

  it('compresses the last, uncached page for its response', async () => {
    const first = await raw(app, '/v1/pets?limit=100', key);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    assert.ok(next, 'the first page links to the next');
    const path = new URL(next, app.url);
    const { identity } = await assertCodings(app, `${path.pathname}${path.search}`, key);
    assert.equal(identity.headers.link, undefined, 'the last page');
    assert.equal(identity.headers.etag, undefined, 'the last page has no ETag');
    assert.equal((JSON.parse(identity.body.toString()) as unknown[]).length, 30);
  });

  it('sends bodies under 1 KB as they are, without Vary: Accept-Encoding, their 304s too', async () => {
    const small: ReadonlyArray<readonly [string, number]> = [
      [petPath, 200],
      ['/v1/pets?limit=3', 200],
      ['/v1/usage', 200],
      ['/v1/pets?limit=0', 400],
    ];
    for (const [path, status] of small) {
      for (const accepting of [{ 'accept-encoding': 'br, gzip' }, {}] as Record<string, string>[]) {
        const answer = await raw(app, path, { ...key, ...accepting });
        const shown = `${path} ${JSON.stringify(accepting)}`;
        assert.equal(answer.status, status, shown);
        assert.ok(answer.body.length < 1024, `${shown}: ${answer.body.length} B`);
        assert.equal(answer.headers['content-encoding'], undefined, shown);
        assert.equal(varies(answer), false, shown);
        JSON.parse(answer.body.toString());
      }
    }
    for (const path of [petPath, '/v1/pets?limit=3']) {
      const { headers } = await raw(app, path, key);
      const condition = { ...key, 'accept-encoding': 'br', 'if-none-match': String(headers.etag) };
      const notModified = await raw(app, path, condition);
      assert.equal(notModified.status, 304, path);
      assert.equal(varies(notModified), false, `${path}: the 304 has the 200's headers`);
    }
  });

  it('negotiates by q-values, * and identity', async () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ['gzip', 'gzip'],
      ['GZIP', 'gzip'],
      ['br', 'br'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip;q=0.2, br;q=0.9', 'br'],
      ['*', 'br'],
      ['gzip;q=0, *', 'br'],
      ['br;q=0, *;q=0.1', 'gzip'],
      ['gzip;q=0', undefined],
      ['br;q=0, gzip;q=0', undefined],
      ['identity', undefined],
      ['deflate', undefined],
      ['', undefined],
      // Nothing acceptable: the body is sent as it is rather than refused.
      ['identity;q=0', undefined],
    ];
    const plain = await raw(app, '/v1/pets?limit=100', key);
    for (const [acceptEncoding, expected] of cases) {
      const answer = await raw(app, '/v1/pets?limit=100', { ...key, 'accept-encoding': acceptEncoding });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-encoding'], expected, `Accept-Encoding: ${JSON.stringify(acceptEncoding)}`);
      assert.deepEqual(decoded(answer), plain.body);
      assert.ok(varies(answer));
    }
  });

  it('still refuses a compressed request body with 415', async () => {
    const headers = { ...key, 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const answer = await raw(app, '/v1/pets', headers, 'POST', '{"name":"Rex","categoryId":1}');
    assert.equal(answer.status, 415);
    assert.equal((JSON.parse(answer.body.toString()) as { code: string }).code, 'unsupported_media_type');
  });
});

describe('Compression of the public documents', () => {
  const app = appForSuite();

  it('sends /v1/openapi.json as gzip and br, revalidated by its ETag, and publicly cacheable', async () => {
    const { identity, br } = await assertCodings(app, '/v1/openapi.json');
    assert.equal((JSON.parse(identity.body.toString()) as { openapi: string }).openapi, '3.1.0');
    const notModified = await raw(app, '/v1/openapi.json', {
      'accept-encoding': 'br',
      'if-none-match': String(identity.headers.etag),
    });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.etag, br.headers.etag);
    assert.equal(notModified.headers['cache-control'], 'public, max-age=300');
  });

  it('sends the reference page and its scripts compressed, the same bytes to concurrent first requests', async () => {
    const path = '/docs/static/swagger-ui-bundle.js';
    const concurrent = await Promise.all([1, 2, 3].map(() => raw(app, path, { 'accept-encoding': 'br' })));
    for (const answer of concurrent) assert.deepEqual(answer.body, concurrent[0]?.body);
    const { identity, br } = await assertCodings(app, path);
    assert.deepEqual(br.body, concurrent[0]?.body);
    const script = await request(app, path, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(script.text, identity.body.toString(), 'fetch reads the same script');
    const notModified = await raw(app, path, { 'if-none-match': String(br.headers.etag) });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.etag, identity.headers.etag);
    await assertCodings(app, '/docs/static/swagger-initializer.js');
  });
});
