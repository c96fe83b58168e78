import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MID } from '../ratelimit/rate-limit-assertions.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import { adminApiForSuite, ok, type OperatorToken } from './admin-calls.ts';

/**
 * The operator tokens through the admin API (docs/operations.md, "Admin API"): listed without their
 * secrets, and revoked there, which ends their sessions too; creating one stays with the CLI.
 */

describeEachBackend('the admin API: operator tokens', (backend) => {
  const { app, clock, admin } = adminApiForSuite(backend);

  it('GET /operator-tokens lists tokens without secrets; POST …/{id}/revoke refuses one at once', async () => {
    clock.set(MID);
    const { token, record } = await app.tokens.create('to revoke');
    const session = await app.logIn(token);
    assert.equal((await request(app.operator, '/admin/v1/status', { key: token })).status, 200);
    const listed = ok<{ tokens: OperatorToken[] }>(await admin('/admin/v1/operator-tokens'));
    const mine = listed.tokens.find((listedToken) => listedToken.id === record.id);
    assert.ok(mine, `${record.id} is listed`);
    // Its use is written in the background: listed once written.
    assert.ok([null, new Date(MID).toISOString()].includes(mine.lastUsedAt), String(mine.lastUsedAt));
    assert.deepEqual(mine, {
      id: record.id,
      name: 'to revoke',
      createdAt: new Date(MID).toISOString(),
      lastUsedAt: mine.lastUsedAt,
      revokedAt: null,
    });
    assert.ok(
      listed.tokens.some((listedToken) => listedToken.name === 'tests'),
      'every token is listed',
    );
    const secret = token.slice(21);
    assert.ok(!JSON.stringify(listed).includes(secret), 'no secret');
    const stored = await app.publicApp.services.store.operatorTokens.findById(record.id);
    assert.ok(stored && !JSON.stringify(listed).includes(stored.hash), 'no hash');

    clock.advance(1000);
    const revoked = ok<OperatorToken>(await admin(`/admin/v1/operator-tokens/${record.id}/revoke`, { method: 'POST' }));
    assert.equal(revoked.revokedAt, new Date(MID + 1000).toISOString());
    assertError(await request(app.operator, '/admin/v1/status', { key: token }), 401, 'unauthorized');
    const withSession = await request(app.operator, '/admin/v1/status', { headers: { cookie: session } });
    assertError(withSession, 401, 'unauthorized', 'session');
    clock.advance(1000);
    const again = ok<OperatorToken>(await admin(`/admin/v1/operator-tokens/${record.id}/revoke`, { method: 'POST' }));
    assert.equal(again.revokedAt, revoked.revokedAt, 'revoking twice keeps the first time');
    assert.equal(
      ok<{ tokens: OperatorToken[] }>(await admin('/admin/v1/operator-tokens')).tokens.find((t) => t.id === record.id)
        ?.revokedAt,
      revoked.revokedAt,
    );
    for (const id of ['Z'.repeat(16), 'nope']) {
      assertError(await admin(`/admin/v1/operator-tokens/${id}/revoke`, { method: 'POST' }), 404, 'not_found', id);
    }
    // Creating one stays with the command-line tool.
    const create = await admin('/admin/v1/operator-tokens', { method: 'POST', json: { name: 'x' } });
    assertError(create, 405, 'method_not_allowed');
    clock.set(MID);
  });
});
