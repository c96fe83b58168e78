import assert from 'node:assert/strict';
import { it } from 'node:test';
import { driveToBan, MID } from '../ratelimit/rate-limit-assertions.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import { adminApiForSuite, ALL_SCOPES, DAY_MS, ISO, ok, type Account, type Key } from './admin-calls.ts';

/**
 * The keys and bans of the admin API (docs/operations.md, "Admin API"), and their effects on the public
 * API: a key made here works there with the scopes it was given, a revoked one is refused at once, and
 * a lifted ban ends. Answers are checked against the admin document, as every admin test's are.
 */

describeEachBackend('the admin API: keys and bans', (backend) => {
  const { app, clock, admin, newAccount, newKey, everyPage } = adminApiForSuite(backend);

  it("GET /accounts/{name}/keys: limit and cursor page through its keys in the account's order", async () => {
    clock.set(MID);
    const name = await newAccount();
    // Three in the same millisecond: their ids order them.
    for (let made = 0; made < 3; made += 1) await newKey(name);
    clock.advance(1000);
    await newKey(name);
    clock.set(MID);
    const shown = ok<Account & { keys: Key[] }>(await admin(`/admin/v1/accounts/${name}`)).keys;
    const paged = await everyPage<Key>(`/admin/v1/accounts/${name}/keys?limit=3`, 'keys');
    assert.deepEqual(
      paged.pages.map((page) => page.length),
      [3, 1],
    );
    assert.deepEqual(paged.pages.flat(), shown);
    const ones = await everyPage<Key>(`/admin/v1/accounts/${name}/keys?limit=1`, 'keys');
    assert.deepEqual(ones.pages.flat(), shown);
    const whole = ok<{ keys: Key[]; nextCursor: string | null }>(await admin(`/admin/v1/accounts/${name}/keys`));
    assert.deepEqual(whole, { keys: shown, nextCursor: null });

    const accountsCursor = Buffer.from('a1.1').toString('base64url');
    for (const bad of ['nope', accountsCursor, Buffer.from('k1.1.key/x').toString('base64url')]) {
      assertError(await admin(`/admin/v1/accounts/${name}/keys?cursor=${bad}`), 400, 'invalid_query', "'cursor'");
    }
    assertError(await admin(`/admin/v1/accounts/${name}/keys?limit=201`), 400, 'invalid_query', "'limit'");
  });

  it('POST /accounts/{name}/keys makes a key that works on the public listener; GET lists them', async () => {
    const name = await newAccount();
    clock.set(MID);
    const plain = await newKey(name);
    assert.match(plain.key, /^pst_[0-9A-Za-z]{36}$/);
    assert.equal(plain.expiresAt, null);
    assert.deepEqual(plain.scopes, ALL_SCOPES, 'a key issued without a choice has every scope');
    assert.equal(plain.state, 'active');
    clock.advance(1000);
    const expiring = await newKey(name, { expiresIn: '30d' });
    assert.equal(expiring.expiresAt, new Date(MID + 1000 + 30 * DAY_MS).toISOString());
    for (const key of [plain.key, expiring.key]) {
      assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    }
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((key) => key.id),
      [plain.id, expiring.id],
    );
    for (const key of listed) {
      assert.match(key.createdAt, ISO);
      assert.equal('key' in key, false, 'a listing never shows a key');
    }
    for (const expiresIn of ['30 days', '0d', 'soon']) {
      const refused = await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { expiresIn } });
      assertError(refused, 400, 'invalid_body', 'expiresIn');
    }
    assertError(
      await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { expiresIn: 5 } }),
      400,
      'invalid_body',
      'expiresIn',
    );
    assertError(await admin('/admin/v1/accounts/nobody-here/keys', { method: 'POST' }), 404, 'not_found');
    assertError(await admin('/admin/v1/accounts/nobody-here/keys'), 404, 'not_found');
    clock.set(MID);
  });

  it('POST /accounts/{name}/keys takes scopes; every view shows them; the public API holds keys to them', async () => {
    clock.set(MID);
    const name = await newAccount();
    const reader = await newKey(name, { scopes: ['pets:read'] });
    assert.deepEqual(reader.scopes, ['pets:read']);
    // A second apart, so that the lists' order (oldest first) is the order made.
    clock.advance(1000);
    const watcher = await newKey(name, { scopes: ['usage:read', 'pets:read'], expiresIn: '30d' });
    assert.deepEqual(watcher.scopes, ['pets:read', 'usage:read'], 'in the canonical order');
    clock.advance(1000);
    const everything = await newKey(name, {});
    assert.deepEqual(everything.scopes, ALL_SCOPES);

    const expected = [
      [reader.id, ['pets:read']],
      [watcher.id, ['pets:read', 'usage:read']],
      [everything.id, ALL_SCOPES],
    ];
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((key) => [key.id, key.scopes]),
      expected,
    );
    const shown = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}`)).keys;
    assert.deepEqual(
      shown.map((key) => [key.id, key.scopes]),
      expected,
    );

    assert.equal((await request(app.publicApp, '/v1/pets', { key: reader.key })).status, 200);
    const pet = { name: 'Scoped', categoryId: 1, status: 'available' };
    const write = await request(app.publicApp, '/v1/pets', { method: 'POST', key: reader.key, json: pet });
    assertError(write, 403, 'insufficient_scope', 'pets:write');
    assertError(await request(app.publicApp, '/v1/usage', { key: reader.key }), 403, 'insufficient_scope');
    assert.equal((await request(app.publicApp, '/v1/usage', { key: watcher.key })).status, 200);

    const revoked = ok<Key>(await admin(`/admin/v1/keys/${reader.id}/revoke`, { method: 'POST' }));
    assert.deepEqual(revoked.scopes, ['pets:read'], 'the revoked key keeps its scopes');
    clock.set(MID);
  });

  it('gives keys:manage only when named; keys show the operator token that created and revoked them', async () => {
    const name = await newAccount();
    const plain = await newKey(name);
    assert.ok(!plain.scopes.includes('keys:manage'), 'never implied');
    const manager = await newKey(name, { scopes: ['keys:manage', 'pets:read'] });
    assert.deepEqual(manager.scopes, ['pets:read', 'keys:manage']);
    const token = { kind: 'operator_token', id: app.token.split('_')[1] };
    assert.deepEqual([manager.name, manager.createdBy, manager.revokedBy], [null, token, null]);
    const revoked = ok<Key>(await admin(`/admin/v1/keys/${plain.id}/revoke`, { method: 'POST' }));
    assert.deepEqual(revoked.revokedBy, token);
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    const makers = new Map(listed.map((key) => [key.id, [key.createdBy, key.revokedBy]]));
    assert.deepEqual(makers.get(plain.id), [token, token]);
    assert.deepEqual(makers.get(manager.id), [token, null]);
  });

  it('POST /accounts/{name}/keys refuses unknown, repeated and missing scopes, naming the valid ones', async () => {
    const name = await newAccount();
    const valid = 'pets:read, pets:write, usage:read, keys:manage';
    for (const scopes of [['pets:read', 'Pets:Write'], [], ['pets:read', 'pets:read'], 'pets:read', [7]]) {
      const refused = await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { scopes } });
      assertError(refused, 400, 'invalid_body', "field 'scopes'", valid);
    }
    const unknown = await admin(`/admin/v1/accounts/${name}/keys`, {
      method: 'POST',
      json: { scopes: ['pets:delete'] },
    });
    assert.equal(
      assertError(unknown, 400, 'invalid_body').message,
      `field 'scopes' must be a list of one or more of ${valid}, each once (got ["pets:delete"])`,
    );
    assert.deepEqual(ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys, [], 'no key was made');
  });

  it('POST /keys/{id}/revoke: the public listener refuses the key at once', async () => {
    clock.set(MID);
    const name = await newAccount();
    const { key, id } = await newKey(name);
    // Used first, so that this instance holds a cached answer about it.
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    const revoked = ok<Key>(await admin(`/admin/v1/keys/${id}/revoke`, { method: 'POST' }));
    assert.equal(revoked.state, 'revoked');
    assert.equal(revoked.revokedAt, new Date(MID).toISOString());
    assertError(await request(app.publicApp, '/v1/pets', { key }), 401, 'unauthorized', 'revoked');
    // Revoking again keeps the first time.
    clock.advance(1000);
    assert.equal(ok<Key>(await admin(`/admin/v1/keys/${id}/revoke`, { method: 'POST' })).revokedAt, revoked.revokedAt);
    clock.set(MID);
    assertError(await admin('/admin/v1/keys/key_nope/revoke', { method: 'POST' }), 404, 'not_found', 'key_nope');
  });

  it('GET /bans lists a ban in force; POST /bans/{keyId}/lift ends it on the public listener', async () => {
    clock.set(MID);
    const name = await newAccount('enterprise', { perMinute: 2, perDay: 100 });
    const { key, id } = await newKey(name);
    await driveToBan(app.publicApp, key);
    const bans = ok<{ bans: Array<{ keyId: string; account: string; startedAt: string; until: string }> }>(
      await admin('/admin/v1/bans'),
    ).bans;
    const ban = bans.find((listed) => listed.keyId === id);
    assert.ok(ban, `the ban of ${id} is listed: ${JSON.stringify(bans)}`);
    assert.equal(ban.account, name);
    assert.equal(ban.startedAt, new Date(MID).toISOString());
    assert.ok(Date.parse(ban.until) > MID);
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((listedKey) => [listedKey.state, listedKey.bannedUntil]),
      [['banned', ban.until]],
    );
    const lifted = ok<Key>(await admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' }));
    assert.equal(lifted.state, 'active');
    assert.equal(lifted.bannedUntil, null);
    assert.deepEqual(lifted.scopes, ALL_SCOPES);
    assert.equal(
      ok<{ bans: Array<{ keyId: string }> }>(await admin('/admin/v1/bans')).bans.some((b) => b.keyId === id),
      false,
    );
    // The key is no longer banned: a limited one again, the next minute a served one.
    clock.advance(60_000);
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    assertError(await admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' }), 404, 'not_found', 'not banned');
    assertError(await admin('/admin/v1/bans/key_nope/lift', { method: 'POST' }), 404, 'not_found');
    clock.set(MID);
  });
});
