import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import {
  assertMatchesDocument,
  loadContract,
  pathTemplateOf,
  type OpenApiDocument,
} from '../support/openapi-contract.ts';
import { adminApiForSuite, ok } from './admin-calls.ts';

/**
 * The admin API (docs/operations.md, "Admin API") through the operator listener, over the same
 * services as the public listener: the OpenAPI document it serves apart from the public one, against
 * which `request()` checks every answer of an admin operation (test/support/openapi-contract.ts), its
 * status, and the names and ids its paths refuse before storage sees them.
 */

describeEachBackend('the admin API: its document, status and paths', (backend) => {
  const { app, admin, newAccount } = adminApiForSuite(backend);

  it('serves its own OpenAPI document, apart from the public one', async () => {
    const document = ok<OpenApiDocument>(await admin('/admin/v1/openapi.json'));
    assert.match(document.openapi, /^3\.1\./);
    assert.deepEqual(document.servers, [{ url: '/admin/v1' }]);
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(operations.sort(), [
      'DELETE /session',
      'GET /accounts',
      'GET /accounts/{name}',
      'GET /accounts/{name}/keys',
      'GET /accounts/{name}/usage',
      'GET /accounts/{name}/usage/history',
      'GET /audit',
      'GET /bans',
      'GET /deprecated-callers',
      'GET /operator-tokens',
      'GET /status',
      'GET /usage/history',
      'GET /usage/top',
      'POST /accounts',
      'POST /accounts/{name}/keys',
      'POST /bans/{keyId}/lift',
      'POST /keys/{id}/revoke',
      'POST /operator-tokens/{id}/revoke',
      'POST /session',
      'PUT /accounts/{name}/key-limit',
      'PUT /accounts/{name}/plan',
    ]);
    const publicAnswer = await request(app.publicApp, '/v1/openapi.json');
    assert.equal(publicAnswer.status, 200);
    const publicDocument = publicAnswer.json<OpenApiDocument>();
    assert.ok(
      Object.keys(publicDocument.paths).every((path) => !path.includes('admin') && !path.includes('session')),
      'the public document shows nothing of the admin API',
    );
  });

  it('checks answers against that document: one off it fails', async () => {
    const contract = await loadContract(app.operator);
    assert.equal(pathTemplateOf(contract, '/admin/v1/accounts/acme/keys'), '/accounts/{name}/keys');
    const answer = (bodyText: string, status = 200) => ({
      status,
      headers: new Headers({ 'content-type': 'application/json' }),
      bodyText,
    });
    assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[],"nextCursor":null}'));
    assert.throws(() => assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[]}')));
    assert.throws(() =>
      assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[{"id":1}],"nextCursor":null}')),
    );
    assert.throws(() => assertMatchesDocument(contract, 'GET', '/status', answer('{}', 418)));
  });

  it('GET /status: storage, Redis, accounts and bans', async () => {
    await newAccount();
    const status = ok<{
      storage: { backend: string; ready: boolean };
      redis: { ready: boolean } | null;
      accounts: number;
      activeBans: number;
      checkedAt: string;
      countsUnavailable: string | null;
    }>(await admin('/admin/v1/status'));
    assert.deepEqual(status.storage, { backend: backend.name, ready: true });
    assert.equal(status.countsUnavailable, null);
    assert.equal(status.checkedAt, new Date(app.publicApp.clock.now()).toISOString(), 'probed for this request');
    assert.deepEqual(status.redis, backend.name === 'postgres' ? { ready: true } : null);
    assert.equal(status.accounts, (await app.publicApp.services.accounts.listAccounts()).length);
    assert.equal(status.activeBans, (await app.publicApp.services.accounts.listActiveBans()).length);
  });

  it('refuses names and ids in paths that no account, key or token can have, before storage sees them', async () => {
    // PostgreSQL refuses text holding NUL: such a path once answered 500 there.
    for (const [name, mention] of [
      ['%00', 'control characters'],
      ['a%00b', 'control characters'],
      ['.hidden', 'account name'],
      ['has%20space', 'account name'],
      ['x'.repeat(65), 'account name'],
    ] as const) {
      for (const [method, path] of [
        ['GET', `/admin/v1/accounts/${name}`],
        ['GET', `/admin/v1/accounts/${name}/keys`],
        ['POST', `/admin/v1/accounts/${name}/keys`],
        ['GET', `/admin/v1/accounts/${name}/usage`],
        ['GET', `/admin/v1/accounts/${name}/usage/history`],
      ] as const) {
        assertError(await admin(path, { method }), 400, 'invalid_path', mention);
      }
    }
    for (const id of ['%00', 'key_%01', '%7F']) {
      for (const path of [
        `/admin/v1/keys/${id}/revoke`,
        `/admin/v1/bans/${id}/lift`,
        `/admin/v1/operator-tokens/${id}/revoke`,
      ]) {
        assertError(await admin(path, { method: 'POST' }), 400, 'invalid_path', 'control characters');
      }
    }
    assertError(await admin('/admin/v1/keys/key_unknown/revoke', { method: 'POST' }), 404, 'not_found');
    for (const query of ['/accounts?q=%00', '/accounts?q=a%00b', '/audit?target=account:a%00', '/audit?actor=%01']) {
      assertError(await admin(`/admin/v1${query}`), 400, 'invalid_query', 'control characters');
    }
  });
});
