import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { publicCore, publicParts } from '../../src/http/app.ts';
import { buildHttpApp } from '../../src/http/core.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * A route carries its own facts in its config, and nothing else lists paths: a route added to the
 * real public app with nothing but its config gets 405s for the other methods, is behind a key
 * unless it says it is public, needs the scope it names, and counts in the usage history as the
 * operation it names.
 */
describe('a route registered with nothing but its config', () => {
  const base = appForSuite();
  let app: FastifyInstance;
  let url: string;

  before(async () => {
    app = await buildHttpApp(publicCore(base.services), async (scope) => {
      await publicParts(base.services)(scope);
      scope.get('/v1/pets-of-the-day', { config: { usage: 'listPets', scope: 'pets:read' } }, async (_request, reply) =>
        reply.type('application/json; charset=utf-8').send('[]'),
      );
      scope.get('/v1/store-hours', { config: { public: true } }, async (_request, reply) =>
        reply.type('application/json; charset=utf-8').send('{"open":"09:00"}'),
      );
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  after(() => app.close());

  it('answers every other method on its path with 405, Allow and the Error body, after authentication', async () => {
    const { key } = await base.newKey();
    const authorization = `Bearer ${key}`;
    for (const method of ['POST', 'DELETE', 'PUT', 'PATCH', 'PROPFIND']) {
      const answer = await fetch(`${url}/v1/pets-of-the-day`, { method, headers: { authorization } });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'GET, HEAD');
      assert.deepEqual(await answer.json(), {
        code: 'method_not_allowed',
        message: `${method} is not allowed on /v1/pets-of-the-day; allowed: GET, HEAD`,
        status: 405,
      });
    }
    const anonymous = await fetch(`${url}/v1/pets-of-the-day`, { method: 'DELETE' });
    assert.equal(anonymous.status, 401, 'a path behind a key answers 401 before 405');
  });

  it('needs the scope its config names, and the document says so', async () => {
    const writer = await base.newKey({ scopes: ['pets:write'] });
    const refused = await fetch(`${url}/v1/pets-of-the-day`, { headers: { authorization: `Bearer ${writer.key}` } });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { code: string }).code, 'insufficient_scope');
    const reader = await base.newKey({ scopes: ['pets:read'] });
    const served = await fetch(`${url}/v1/pets-of-the-day`, { headers: { authorization: `Bearer ${reader.key}` } });
    assert.equal(served.status, 200);
    const document = (await (await fetch(`${url}/v1/openapi.json`)).json()) as {
      paths: Record<string, { get: { security: unknown; responses: Record<string, unknown> } }>;
    };
    const operation = document.paths['/pets-of-the-day']?.get;
    assert.deepEqual(operation?.security, [{ bearerAuth: ['pets:read'] }]);
    assert.ok(operation?.responses['403'], 'the 403 of a key without the scope is documented');
  });

  it('may not be behind a key without naming a scope: the app is not built', async () => {
    await assert.rejects(
      buildHttpApp(publicCore(base.services), async (scope) => {
        await publicParts(base.services)(scope);
        scope.get('/v1/unguarded', { config: { usage: 'listPets' } }, async () => '[]');
      }),
      /GET \/v1\/unguarded is behind a key but names no scope/,
    );
  });

  it('answers a public path without a key, its 405s too', async () => {
    const answer = await fetch(`${url}/v1/store-hours`);
    assert.equal(answer.status, 200);
    const refused = await fetch(`${url}/v1/store-hours`, { method: 'POST' });
    assert.equal(refused.status, 405);
    assert.equal(refused.headers.get('allow'), 'GET, HEAD');
  });

  it('counts its answers in the usage history as the operation its config names', async () => {
    const { key } = await base.newKey();
    const authorization = `Bearer ${key}`;
    for (let i = 0; i < 3; i += 1) {
      const answer = await fetch(`${url}/v1/pets-of-the-day`, { headers: { authorization } });
      assert.equal(answer.status, 200);
    }
    const history = await fetch(`${url}/v1/usage/history`, { headers: { authorization } });
    assert.equal(history.status, 200);
    const { points } = (await history.json()) as { points: { operation: string; outcome: string; count: number }[] };
    assert.deepEqual(
      points.filter((point) => point.operation === 'listPets'),
      [{ at: '2026-06-01T12:00:00.000Z', operation: 'listPets', outcome: '2xx', count: 3 }],
    );
  });
});
