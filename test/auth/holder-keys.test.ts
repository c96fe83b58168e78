import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyScope } from '../../src/domain/scopes.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { MID } from '../ratelimit/rate-limit-assertions.ts';

/**
 * The keys an account holder manages through /v1/keys, on both backend pairs, through the real app:
 * `request()` holds every answer to the served document. Used as the docs promise, and attacked:
 * escalation, other accounts' ids, revoked and expired callers, concurrent creations past the
 * limit, replays from another key, malformed bodies.
 */

interface HolderKey {
  readonly id: string;
  readonly name: string | null;
  readonly scopes: readonly string[];
  readonly createdBy: { readonly kind: string; readonly id?: string };
  readonly revokedBy: { readonly kind: string; readonly id?: string } | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

interface CreatedKey extends HolderKey {
  readonly key: string;
}

const MANAGER_SCOPES: readonly KeyScope[] = ['pets:read', 'pets:write', 'usage:read', 'keys:manage'];
const DAY_S = 86_400;

describeEachBackend('keys the account holder manages', (backend) => {
  let app: TestApp;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock(MID);
    app = await startTestApp({ backend, clock });
  });
  after(() => app.close());

  /** A new account with a key that manages its keys (holding `scopes`). */
  async function manager(
    scopes: readonly KeyScope[] = MANAGER_SCOPES,
  ): Promise<{ key: string; keyId: string; account: string }> {
    return app.newKey({ scopes: [...scopes] });
  }

  function create(key: string, json: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    return request(app, '/v1/keys', { method: 'POST', key, json, headers });
  }

  function created(answer: HttpAnswer): CreatedKey {
    assert.equal(answer.status, 201, answer.text);
    return answer.json<CreatedKey>();
  }

  async function listed(key: string): Promise<HolderKey[]> {
    const answer = await request(app, '/v1/keys?limit=100', { key });
    assert.equal(answer.status, 200, answer.text);
    return answer.json<HolderKey[]>();
  }

  it('creates a key with the scopes asked, shows its secret once, and lists it without one', async () => {
    clock.set(MID);
    const caller = await manager();
    const answer = await create(caller.key, {
      name: 'dashboard',
      scopes: ['usage:read', 'pets:read'],
      expiresInSeconds: 3600,
    });
    const made = created(answer);
    assert.match(made.key, /^pst_[0-9A-Za-z]{36}$/);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.headers.get('idempotent-replayed'), null);
    assert.deepEqual(
      { ...made, key: undefined, id: undefined },
      {
        key: undefined,
        id: undefined,
        name: 'dashboard',
        scopes: ['pets:read', 'usage:read'],
        createdBy: { kind: 'key', id: caller.keyId },
        revokedBy: null,
        createdAt: new Date(MID).toISOString(),
        lastUsedAt: null,
        expiresAt: new Date(MID + 3_600_000).toISOString(),
        revokedAt: null,
      },
    );
    // The new key holds what it was given, and no more.
    assert.equal((await request(app, '/v1/pets', { key: made.key })).status, 200);
    assertError(await request(app, '/v1/keys', { key: made.key }), 403, 'insufficient_scope', "'keys:manage'");

    const listing = await request(app, '/v1/keys', { key: caller.key });
    assert.equal(listing.status, 200, listing.text);
    assert.ok(!listing.text.includes(made.key), 'a listing never shows a secret');
    const keys = listing.json<HolderKey[]>();
    const makers = new Map(keys.map((key) => [key.id, [key.name, key.createdBy]]));
    assert.deepEqual(makers.get(caller.keyId), [null, { kind: 'operator' }], "the operator's key");
    assert.deepEqual(makers.get(made.id), ['dashboard', { kind: 'key', id: caller.keyId }]);
    assert.equal(keys.length, 2);
    for (const key of keys) assert.equal('key' in key, false);

    const [entry] = await app.services.store.audit.list({ target: { type: 'key', id: made.id }, limit: 5 });
    assert.deepEqual(
      [entry?.action, entry?.actor, entry?.via, entry?.requestId],
      [
        'key.create',
        { kind: 'key', id: caller.keyId, account: caller.account },
        'key',
        answer.headers.get('x-request-id'),
      ],
    );
    assert.deepEqual(entry?.after, {
      account: caller.account,
      name: 'dashboard',
      expiresAt: new Date(MID + 3_600_000).toISOString(),
      scopes: ['pets:read', 'usage:read'],
    });
  });

  it('pages the keys oldest first with a next link, and refuses a cursor it did not make', async () => {
    clock.set(MID);
    const caller = await manager();
    const ids = [caller.keyId];
    for (let index = 0; index < 3; index += 1) {
      clock.advance(1000);
      ids.push(created(await create(caller.key, { name: `k${index}`, scopes: ['pets:read'] })).id);
    }
    const seen: string[] = [];
    let path: string | undefined = '/v1/keys?limit=3';
    while (path !== undefined) {
      const page = await request(app, path, { key: caller.key });
      assert.equal(page.status, 200, page.text);
      seen.push(...page.json<HolderKey[]>().map((key) => key.id));
      const link = page.headers.get('link');
      path = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    }
    assert.deepEqual(seen, ids);
    assertError(await request(app, '/v1/keys?cursor=bm9wZQ', { key: caller.key }), 400, 'invalid_query', "'cursor'");
  });

  it('gives only scopes the caller holds: another is 403 insufficient_scope naming it; nothing is made', async () => {
    clock.set(MID);
    const caller = await manager(['keys:manage', 'pets:read']);
    for (const scopes of [['pets:write'], ['pets:read', 'usage:read']]) {
      const refused = await create(caller.key, { name: 'more', scopes });
      const lacking = scopes.includes('pets:write') ? 'pets:write' : 'usage:read';
      assertError(refused, 403, 'insufficient_scope', `'${lacking}'`, 'pets:read, keys:manage');
    }
    // It may give keys:manage on, as it holds it.
    const manages = created(await create(caller.key, { name: 'deputy', scopes: ['keys:manage'] }));
    assert.deepEqual(manages.scopes, ['keys:manage']);
    assert.equal((await listed(caller.key)).length, 2);
    // A key issued without a choice holds every scope but keys:manage: it may not call /v1/keys at all.
    const { key: everyday } = await app.newKey();
    assertError(await create(everyday, { name: 'x', scopes: ['pets:read'] }), 403, 'insufficient_scope');
  });

  it('refuses malformed bodies and unknown scopes with 400, naming the field, and makes nothing', async () => {
    clock.set(MID);
    const caller = await manager();
    const refusals: ReadonlyArray<readonly [unknown, string]> = [
      [{ scopes: ['pets:read'] }, "'name'"],
      [{ name: 'x' }, "'scopes'"],
      [{ name: '', scopes: ['pets:read'] }, "'name'"],
      [{ name: 'x'.repeat(101), scopes: ['pets:read'] }, "'name'"],
      [{ name: 'tab\there', scopes: ['pets:read'] }, "'name'"],
      [{ name: 'x', scopes: [] }, "'scopes'"],
      [{ name: 'x', scopes: ['pets:delete'] }, 'keys:manage'],
      [{ name: 'x', scopes: ['pets:read', 'pets:read'] }, "'scopes'"],
      [{ name: 'x', scopes: ['pets:read'], expiresInSeconds: 59 }, "'expiresInSeconds'"],
      [{ name: 'x', scopes: ['pets:read'], expiresInSeconds: 1.5 }, "'expiresInSeconds'"],
      [{ name: 'x', scopes: ['pets:read'], owner: 'someone-else' }, "'owner'"],
      [['pets:read'], 'object'],
    ];
    for (const [json, mention] of refusals) assertError(await create(caller.key, json), 400, 'invalid_body', mention);
    const malformed = await request(app, '/v1/keys', {
      method: 'POST',
      key: caller.key,
      headers: { 'content-type': 'application/json' },
      body: '{"name": "x",',
    });
    assertError(malformed, 400, 'invalid_json');
    assert.equal((await listed(caller.key)).length, 1, 'nothing was made');
  });

  it("answers another account's key id as an unknown one: 404, and nothing changes", async () => {
    clock.set(MID);
    const caller = await manager();
    const other = await manager();
    for (const keyId of [other.keyId, 'key_doesNotExist0000']) {
      for (const action of ['revoke', 'roll']) {
        const answer = await request(app, `/v1/keys/${keyId}/${action}`, {
          method: 'POST',
          key: caller.key,
          ...(action === 'roll' ? { json: {} } : {}),
        });
        assertError(answer, 404, 'not_found', keyId);
      }
    }
    assert.equal((await request(app, '/v1/pets', { key: other.key })).status, 200, 'the other key still works');
    assert.deepEqual(
      (await listed(other.key)).map((key) => [key.id, key.revokedAt, key.expiresAt]),
      [[other.keyId, null, null]],
    );
  });

  it('revokes a key of the account, keeps the first revocation, and lets a key revoke itself', async () => {
    clock.set(MID);
    const caller = await manager();
    const spare = created(await create(caller.key, { name: 'spare', scopes: ['pets:read'] }));
    assert.equal((await request(app, '/v1/pets', { key: spare.key })).status, 200);
    const revoked = await request(app, `/v1/keys/${spare.id}/revoke`, { method: 'POST', key: caller.key });
    assert.equal(revoked.status, 200, revoked.text);
    assert.deepEqual(
      [revoked.json<HolderKey>().revokedAt, revoked.json<HolderKey>().revokedBy],
      [new Date(MID).toISOString(), { kind: 'key', id: caller.keyId }],
    );
    // This instance refuses it at once.
    assertError(await request(app, '/v1/pets', { key: spare.key }), 401, 'unauthorized');
    clock.advance(5000);
    const again = await request(app, `/v1/keys/${spare.id}/revoke`, { method: 'POST', key: caller.key });
    assert.equal(again.json<HolderKey>().revokedAt, new Date(MID).toISOString(), 'the first time is kept');
    const revocations = await app.services.store.audit.list({
      target: { type: 'key', id: spare.id },
      action: 'key.revoke',
      limit: 5,
    });
    assert.equal(revocations.length, 1, 'only the revocation that changed something is recorded');
    assertError(
      await request(app, `/v1/keys/${spare.id}/revoke`, { method: 'POST', key: caller.key, json: {} }),
      400,
      'invalid_body',
    );

    const self = await request(app, `/v1/keys/${caller.keyId}/revoke`, { method: 'POST', key: caller.key });
    assert.equal(self.status, 200, self.text);
    assert.deepEqual(self.json<HolderKey>().revokedBy, { kind: 'key', id: caller.keyId });
    assertError(await request(app, '/v1/keys', { key: caller.key }), 401, 'unauthorized');
  });

  it('refuses revoked and expired callers with 401, whatever they ask', async () => {
    clock.set(MID);
    const revokedCaller = await manager();
    await app.services.accounts.revokeKey(revokedCaller.keyId);
    app.services.keyVerifier.invalidateKey(revokedCaller.keyId);
    const expiring = await app.newKey({ scopes: [...MANAGER_SCOPES], expiresInMs: 60_000 });
    clock.advance(60_000);
    for (const key of [revokedCaller.key, expiring.key]) {
      assertError(await create(key, { name: 'x', scopes: ['pets:read'] }), 401, 'unauthorized');
      assertError(await request(app, '/v1/keys', { key }), 401, 'unauthorized');
      const roll = await request(app, `/v1/keys/${expiring.keyId}/roll`, { method: 'POST', key, json: {} });
      assertError(roll, 401, 'unauthorized');
    }
  });

  it('creates exactly as many keys as the limit leaves room for, however many are asked for at once', async () => {
    clock.set(MID);
    const caller = await manager();
    // Room for 20 beside the caller.
    await app.services.accounts.setKeyLimit(caller.account, 21);
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, index) => create(caller.key, { name: `burst-${index}`, scopes: ['pets:read'] })),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 201).length, 20, statuses.join(' '));
    for (const answer of answers.filter((refused) => refused.status !== 201))
      assertError(answer, 409, 'key_limit', caller.account, '21');
    const accountId = (await app.services.accounts.findAccount(caller.account))?.id ?? 0;
    assert.equal(await app.services.store.keys.countActive(accountId, MID), 21, 'the limit, and not one more');
    // A revocation makes room for one.
    const first = answers.find((answer) => answer.status === 201)?.json<CreatedKey>();
    await request(app, `/v1/keys/${first?.id ?? ''}/revoke`, { method: 'POST', key: caller.key });
    created(await create(caller.key, { name: 'after-revoke', scopes: ['pets:read'] }));
    assertError(await create(caller.key, { name: 'one-too-many', scopes: ['pets:read'] }), 409, 'key_limit');
  });

  it('replays a creation to the same key for the same Idempotency-Key, and to no other key', async () => {
    clock.set(MID);
    const caller = await manager();
    const body = { name: 'retried', scopes: ['pets:read'] };
    const headers = { 'idempotency-key': 'create-retried-1' };
    const first = await create(caller.key, body, headers);
    const replay = await create(caller.key, body, headers);
    assert.equal(replay.status, 201, replay.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text, 'the same answer, secret included');
    assert.equal((await listed(caller.key)).length, 2, 'one key was made');

    assertError(
      await create(caller.key, { ...body, name: 'other' }, headers),
      422,
      'idempotency_conflict',
      'different request',
    );
    // Another key of the same account, even one that may manage keys, gets no secret.
    const sibling = await app.services.accounts.createKey(caller.account, { scopes: [...MANAGER_SCOPES] });
    const stolen = await create(sibling.key, body, headers);
    assertError(stolen, 422, 'idempotency_conflict', 'another key');
    assert.ok(!stolen.text.includes(created(first).key));
    // Storage keeps the answer sealed: the secret is not in it.
    const accountId = (await app.services.accounts.findAccount(caller.account))?.id ?? 0;
    const stored = await app.services.store.audit.change(async ({ idempotency }) => ({
      result: await idempotency.find({ accountId, key: 'keys create-retried-1' }),
      entry: undefined,
    }));
    assert.ok(stored !== undefined, 'the record is kept');
    assert.ok(!stored.response.body.includes(created(first).key), 'the stored answer holds no usable secret');
    // A pet created with the same Idempotency-Key is a request of its own.
    const pet = await request(app, '/v1/pets', {
      method: 'POST',
      key: caller.key,
      json: { name: 'Rex', categoryId: 1 },
      headers,
    });
    assert.equal(pet.status, 201, pet.text);
    assert.equal(pet.headers.get('idempotent-replayed'), null);
  });

  it('rolls a key: same name and scopes, the old one expires after the grace period, 24 h by default', async () => {
    clock.set(MID);
    const caller = await manager();
    const old = created(await create(caller.key, { name: 'service-a', scopes: ['pets:read', 'usage:read'] }));
    const rolled = await request(app, `/v1/keys/${old.id}/roll`, { method: 'POST', key: caller.key, json: {} });
    const fresh = created(rolled);
    assert.notEqual(fresh.id, old.id);
    assert.deepEqual([fresh.name, fresh.scopes, fresh.expiresAt], ['service-a', old.scopes, null]);
    assert.equal(rolled.headers.get('cache-control'), 'no-store');
    const keys = new Map((await listed(caller.key)).map((key) => [key.id, key]));
    assert.equal(keys.get(old.id)?.expiresAt, new Date(MID + DAY_S * 1000).toISOString());
    // Both work during the grace period; the old one stops at its end.
    assert.equal((await request(app, '/v1/pets', { key: old.key })).status, 200);
    assert.equal((await request(app, '/v1/pets', { key: fresh.key })).status, 200);
    clock.advance(DAY_S * 1000);
    assertError(await request(app, '/v1/pets', { key: old.key }), 401, 'unauthorized');
    assert.equal((await request(app, '/v1/pets', { key: fresh.key })).status, 200);
    assertError(
      await request(app, `/v1/keys/${old.id}/roll`, { method: 'POST', key: caller.key, json: {} }),
      409,
      'key_inactive',
      'expired',
    );

    const entries = await app.services.store.audit.list({
      actor: { kind: 'key', id: caller.keyId },
      action: 'key.roll',
      limit: 5,
    });
    assert.deepEqual(entries[0]?.after, { expiresAt: new Date(MID + DAY_S * 1000).toISOString(), successor: fresh.id });
  });

  it('takes a grace period from 0 to 7 days, keeps an earlier expiry, and refuses one out of range', async () => {
    clock.set(MID);
    const caller = await manager();
    const roll = (keyId: string, json: unknown, headers: Record<string, string> = {}) =>
      request(app, `/v1/keys/${keyId}/roll`, { method: 'POST', key: caller.key, json, headers });
    const target = created(await create(caller.key, { name: 'leaked', scopes: ['pets:read'], expiresInSeconds: 600 }));
    for (const gracePeriodSeconds of [-1, 7 * DAY_S + 1, 1.5, '60', null])
      assertError(await roll(target.id, { gracePeriodSeconds }), 400, 'invalid_body', "'gracePeriodSeconds'");
    assertError(await roll(target.id, { graceSeconds: 5 }), 400, 'invalid_body', "'graceSeconds'");
    // A grace longer than the key had left keeps its own expiry; the new key gets its lifetime again.
    const week = created(await roll(target.id, { gracePeriodSeconds: 7 * DAY_S }));
    assert.equal(week.expiresAt, new Date(MID + 600_000).toISOString());
    const byId = new Map((await listed(caller.key)).map((key) => [key.id, key]));
    assert.equal(byId.get(target.id)?.expiresAt, new Date(MID + 600_000).toISOString());

    // 0: the old key stops at once, here.
    const leaked = created(await create(caller.key, { name: 'leaked-now', scopes: ['pets:read'] }));
    const now = created(await roll(leaked.id, { gracePeriodSeconds: 0 }, { 'idempotency-key': 'roll-now' }));
    assertError(await request(app, '/v1/pets', { key: leaked.key }), 401, 'unauthorized');
    assert.equal((await request(app, '/v1/pets', { key: now.key })).status, 200);
    // Retried, the roll answers the same new key and makes no other.
    const again = await roll(leaked.id, { gracePeriodSeconds: 0 }, { 'idempotency-key': 'roll-now' });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(created(again).key, now.key);
    assert.equal((await listed(caller.key)).filter((key) => key.name === 'leaked-now').length, 2);
  });

  it('rolls only keys whose scopes the caller holds, and refuses a revoked key', async () => {
    clock.set(MID);
    const narrow = await manager(['keys:manage']);
    const wide = await app.services.accounts.createKey(narrow.account, { scopes: ['pets:read', 'pets:write'] });
    const refused = await request(app, `/v1/keys/${wide.record.id}/roll`, {
      method: 'POST',
      key: narrow.key,
      json: {},
    });
    assertError(refused, 403, 'insufficient_scope', "'pets:read'");
    await request(app, `/v1/keys/${wide.record.id}/revoke`, { method: 'POST', key: narrow.key });
    const caller = await app.services.accounts.createKey(narrow.account, { scopes: [...MANAGER_SCOPES] });
    const inactive = await request(app, `/v1/keys/${wide.record.id}/roll`, {
      method: 'POST',
      key: caller.key,
      json: {},
    });
    assertError(inactive, 409, 'key_inactive', 'revoked');
  });
});

/**
 * A revocation made on one instance reaches another that has the key cached within the bound the docs
 * promise, KEY_CACHE_TTL_MS (1 s): this instance trusts its cached answer that long. The assertion is
 * that bound itself, with 2 s more for a loaded machine; it does not depend on the clock of the test.
 */
describeEachBackend('a holder revocation on two instances', (backend) => {
  let first: TestApp;
  let second: TestApp;

  before(async () => {
    first = await startTestApp({ backend });
    const { databaseUrl, redisUrl, redisPrefix } = first.services.config;
    const shared = {
      DATABASE_URL: databaseUrl,
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix }),
    };
    second = await startTestApp({ backend, clock: first.clock, env: shared });
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  for (const action of ['revoke', 'roll'] as const) {
    it(`${action}: refused by the other instance within KEY_CACHE_TTL_MS`, async () => {
      const caller = await first.newKey({ scopes: [...MANAGER_SCOPES] });
      const made = await request(first, '/v1/keys', {
        method: 'POST',
        key: caller.key,
        json: { name: 'shared', scopes: ['pets:read'] },
      });
      const target = made.json<CreatedKey>();
      assert.equal((await request(second, '/v1/pets', { key: target.key })).status, 200, 'cached by the second');
      const path = `/v1/keys/${target.id}/${action}`;
      const changed = await request(first, path, {
        method: 'POST',
        key: caller.key,
        ...(action === 'roll' ? { json: { gracePeriodSeconds: 0 } } : {}),
      });
      assert.ok(changed.status < 300, changed.text);
      const started = performance.now();
      const boundMs = second.services.config.keyCacheTtlMs;
      while ((await request(second, '/v1/pets', { key: target.key })).status !== 401) {
        assert.ok(performance.now() - started < boundMs + 2000, `still accepted after ${boundMs} ms`);
        await sleep(50);
      }
    });
  }
});
