import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request, type HttpAnswer } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * Every response states its caching policy: `no-store` for everything an API key touches, every
 * error and the operator endpoints; the public documents may be cached briefly.
 */

const PUBLIC_DOCUMENT = 'public, max-age=300';

function cacheControlOf(answer: HttpAnswer): string | null {
  return answer.headers.get('cache-control');
}

describe('Cache-Control', () => {
  const app = appForSuite();

  it('is no-store on every answer to a key, errors and usage included', async () => {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 6, perDay: 100 });
    const json = { 'content-type': 'application/json' };
    const answers: Array<[number, HttpAnswer]> = [
      [
        201,
        await request(app, '/v1/pets', { method: 'POST', key, headers: json, body: '{"name":"Rex","categoryId":1}' }),
      ],
      [200, await request(app, '/v1/pets', { key })],
      [200, await request(app, '/v1/pets/1', { key })],
      [200, await request(app, '/v1/usage', { key })],
      [404, await request(app, '/v1/nowhere', { key })],
      [400, await request(app, '/v1/pets?limit=0', { key })],
      [405, await request(app, '/v1/pets/1', { method: 'DELETE', key })],
    ];
    answers.push([429, await request(app, '/v1/pets', { key })]);
    for (const [status, answer] of answers) {
      assert.equal(answer.status, status, answer.text);
      assert.equal(cacheControlOf(answer), 'no-store', `${status} is no-store`);
    }
  });

  it('is no-store without a key, on 401 and on a bad URL', async () => {
    const unauthorized = await request(app, '/v1/pets');
    assert.equal(unauthorized.status, 401);
    assert.equal(cacheControlOf(unauthorized), 'no-store');
    const badUrl = await request(app, '/v1/pets/%zz');
    assert.equal(badUrl.status, 400);
    assert.equal(cacheControlOf(badUrl), 'no-store');
  });

  it('is no-store on the operator endpoints', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const answer = await request(app, path);
      assert.equal(answer.status, 200);
      assert.equal(cacheControlOf(answer), 'no-store', path);
    }
  });

  it('lets shared caches keep the public documents briefly, but not their errors', async () => {
    for (const path of ['/v1/openapi.json', '/docs', '/docs/static/swagger-ui.css', '/docs/static/index.html']) {
      const answer = await request(app, path);
      assert.equal(answer.status, 200, path);
      assert.equal(cacheControlOf(answer), PUBLIC_DOCUMENT, path);
    }
    const missing = await request(app, '/docs/static/no-such-file.js');
    assert.equal(missing.status, 404);
    assert.equal(cacheControlOf(missing), 'no-store');
  });
});
