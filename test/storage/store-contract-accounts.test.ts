import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError } from '../../src/errors.ts';
import type { AccountRecord } from '../../src/domain/accounts.ts';
import type { ApiKeyRecord } from '../../src/domain/keys.ts';
import { describeStoreContract, name, NOW } from './store-contract-suite.ts';

/**
 * The Store contract (test/storage/store-contract-suite.ts), on every backend: accounts, their keys
 * and the keys' bans.
 */

await describeStoreContract(({ store, openFresh, newAccountId }) => {
  describe('accounts', () => {
    it('creates, finds, lists, changes plans and counts accounts', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      assert.equal(await fresh.accounts.count(), 0);
      const alpha = await fresh.accounts.create({ name: 'alpha', plan: 'free', perMinute: null, perDay: null }, NOW);
      const beta = await fresh.accounts.create(
        { name: 'beta', plan: 'enterprise', perMinute: 6000, perDay: 5_000_000_000 },
        NOW + 1,
      );
      assert.ok(Number.isSafeInteger(alpha.id) && alpha.id > 0);
      assert.deepEqual(alpha, {
        id: alpha.id,
        name: 'alpha',
        plan: 'free',
        perMinute: null,
        perDay: null,
        createdAt: NOW,
        keyLimit: 20,
      });
      assert.deepEqual(beta, {
        id: beta.id,
        name: 'beta',
        plan: 'enterprise',
        perMinute: 6000,
        perDay: 5_000_000_000,
        createdAt: NOW + 1,
        keyLimit: 20,
      });
      assert.deepEqual(await fresh.accounts.findByName('beta'), beta);
      assert.equal(await fresh.accounts.findByName('gamma'), undefined);
      assert.deepEqual(await fresh.accounts.list(), [alpha, beta]);
      assert.equal(await fresh.accounts.count(), 2);

      const upgraded = await fresh.accounts.setPlan('alpha', 'enterprise', { perMinute: 100, perDay: 1000 });
      assert.deepEqual(upgraded, { ...alpha, plan: 'enterprise', perMinute: 100, perDay: 1000 });
      assert.deepEqual(await fresh.accounts.findByName('alpha'), upgraded);
      assert.deepEqual(await fresh.accounts.setPlan('beta', 'pro', { perMinute: null, perDay: null }), {
        ...beta,
        plan: 'pro',
        perMinute: null,
        perDay: null,
      });
      assert.equal(await fresh.accounts.setPlan('gamma', 'pro', { perMinute: null, perDay: null }), undefined);
    });

    it('pages accounts by id and finds names by a substring in any case, wildcards as themselves', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      const names = ['Shop-One', 'shop_two', 'SHOPxtwo', 'other', 'Shop.Three'];
      const made: AccountRecord[] = [];
      for (const each of names)
        made.push(await fresh.accounts.create({ name: each, plan: 'free', perMinute: null, perDay: null }, NOW));
      const page = (nameContains: string | undefined, afterId = 0, limit = 10) =>
        fresh.accounts.page({ nameContains, afterId, limit }).then((found) => found.map((account) => account.name));

      assert.deepEqual(await fresh.accounts.page({ nameContains: undefined, afterId: 0, limit: 2 }), made.slice(0, 2));
      assert.deepEqual(await page(undefined, made[1]?.id), names.slice(2));
      assert.deepEqual(await page(undefined, made[4]?.id), []);
      assert.deepEqual(await page(undefined, 0, 0), []);
      assert.deepEqual(await page(''), names);
      assert.deepEqual(await page('shop'), ['Shop-One', 'shop_two', 'SHOPxtwo', 'Shop.Three']);
      assert.deepEqual(await page('shop', made[1]?.id, 1), ['SHOPxtwo']);
      assert.deepEqual(await page('P_T'), ['shop_two'], '_ is no wildcard');
      assert.deepEqual(await page('p.t'), ['Shop.Three'], '. is none either');
      assert.deepEqual(await page('p%t'), [], '% is no wildcard');
      assert.deepEqual(await page('p\\_t'), [], '\\ escapes nothing');
      assert.deepEqual(await page('%'), []);
    });

    it('counts the keys of the accounts asked for only', async () => {
      const [a, b] = [await newAccountId(), await newAccountId()];
      await store().keys.create({ id: name('kid'), accountId: a, hash: name('hash'), expiresAt: null }, NOW);
      await store().keys.create({ id: name('kid'), accountId: b, hash: name('hash'), expiresAt: NOW }, NOW);
      const stats = await store().accounts.keyStats(NOW + 1, [b]);
      assert.deepEqual([...stats], [[b, { total: 1, active: 0, lastUsedAt: null }]]);
      assert.deepEqual(await store().accounts.keyStats(NOW, []), new Map());
    });

    it('rejects a taken name with ConflictError and keeps the first account', async () => {
      const taken = name('taken');
      const first = await store().accounts.create({ name: taken, plan: 'pro', perMinute: null, perDay: null }, NOW);
      await assert.rejects(
        store().accounts.create({ name: taken, plan: 'free', perMinute: null, perDay: null }, NOW),
        ConflictError,
      );
      assert.deepEqual(await store().accounts.findByName(taken), first);
      // The store stays usable after the conflict.
      assert.ok((await store().accounts.count()) >= 1);
    });
  });

  describe('keys', () => {
    it('creates keys and finds them by hash and by id, and lists them per account', async () => {
      const accountName = name('keys');
      const account = await store().accounts.create(
        { name: accountName, plan: 'business', perMinute: null, perDay: null },
        NOW,
      );
      const hash = name('hash-a');
      const first = await store().keys.create(
        { id: name('kid-b'), accountId: account.id, hash, expiresAt: NOW + 60_000 },
        NOW,
      );
      assert.deepEqual(first, {
        id: first.id,
        accountId: account.id,
        name: null,
        createdBy: null,
        revokedBy: null,
        createdAt: NOW,
        expiresAt: NOW + 60_000,
        revokedAt: null,
        lastUsedAt: null,
        scopes: ['pets:read', 'pets:write', 'usage:read'],
        bannedUntil: null,
      });
      const readOnlyHash = name('hash-b');
      const second = await store().keys.create(
        { id: name('kid-a'), accountId: account.id, hash: readOnlyHash, expiresAt: null, scopes: ['pets:read'] },
        NOW + 5,
      );
      assert.deepEqual(second.scopes, ['pets:read']);
      assert.deepEqual((await store().keys.findPrincipalByHash(readOnlyHash))?.scopes, ['pets:read']);
      assert.deepEqual(await store().keys.findPrincipalByHash(hash), {
        keyId: first.id,
        accountId: account.id,
        accountName,
        plan: 'business',
        perMinute: null,
        perDay: null,
        expiresAt: NOW + 60_000,
        revokedAt: null,
        scopes: ['pets:read', 'pets:write', 'usage:read'],
        bannedUntil: null,
      });
      assert.equal(await store().keys.findPrincipalByHash('no-such-hash'), undefined);
      assert.deepEqual(await store().keys.findById(first.id), first);
      assert.equal(await store().keys.findById('no-such-key'), undefined);
      assert.deepEqual(await store().keys.listForAccount(account.id), [first, second]);
      assert.deepEqual(await store().keys.listForAccount(account.id + 1_000_000), []);

      await store().accounts.setPlan(accountName, 'enterprise', { perMinute: 10, perDay: 20 });
      const principal = await store().keys.findPrincipalByHash(hash);
      assert.equal(principal?.plan, 'enterprise');
      assert.equal(principal?.perMinute, 10);
      assert.equal(principal?.perDay, 20);
    });

    it('keeps who created and who first revoked a key, its name, and counts the active keys', async () => {
      const account = await store().accounts.create(
        { name: name('holder'), plan: 'free', perMinute: null, perDay: null },
        NOW,
      );
      assert.equal((await store().accounts.setKeyLimit(account.name, 3))?.keyLimit, 3);
      assert.equal(await store().accounts.setKeyLimit(name('nobody'), 3), undefined);
      const made = await store().keys.create(
        {
          id: name('kid-made'),
          accountId: account.id,
          hash: name('hash-made'),
          expiresAt: null,
          name: 'dashboard',
          createdBy: { kind: 'key', id: 'key_maker' },
        },
        NOW,
      );
      assert.deepEqual(
        [made.name, made.createdBy, made.revokedBy],
        ['dashboard', { kind: 'key', id: 'key_maker' }, null],
      );
      const byCli = await store().keys.create(
        {
          id: name('kid-cli'),
          accountId: account.id,
          hash: name('hash-cli'),
          expiresAt: NOW + 10,
          createdBy: { kind: 'cli', user: 'ops:admin' },
        },
        NOW,
      );
      assert.deepEqual((await store().keys.findById(byCli.id))?.createdBy, { kind: 'cli', user: 'ops:admin' });
      assert.equal(await store().keys.countActive(account.id, NOW), 2);
      assert.equal(await store().keys.countActive(account.id, NOW + 10), 1, 'an expired key is not active');

      assert.equal(await store().keys.revoke(made.id, NOW + 1, { kind: 'operator_token', id: 'tok' }), true);
      assert.equal(await store().keys.revoke(made.id, NOW + 2, { kind: 'key', id: 'key_late' }), true);
      const revoked = await store().keys.findById(made.id);
      assert.deepEqual([revoked?.revokedAt, revoked?.revokedBy], [NOW + 1, { kind: 'operator_token', id: 'tok' }]);
      assert.equal(await store().keys.countActive(account.id, NOW), 1);

      // An expiry is brought forward, never pushed back.
      assert.equal(await store().keys.expireBy(byCli.id, NOW + 5), true);
      assert.equal((await store().keys.findById(byCli.id))?.expiresAt, NOW + 5);
      await store().keys.expireBy(byCli.id, NOW + 50);
      assert.equal((await store().keys.findById(byCli.id))?.expiresAt, NOW + 5);
      assert.equal(await store().keys.expireBy(name('no-such-key'), NOW), false);
    });

    it("pages an account's keys in the order of listForAccount: creation, then id in byte order", async () => {
      const accountId = await newAccountId();
      const stem = name('kid');
      // One creation time for three: the ids decide, upper case before lower as in bytes.
      for (const [id, at] of [
        [`${stem}-a`, NOW],
        [`${stem}-B`, NOW],
        [`${stem}-C`, NOW],
        [`${stem}-0`, NOW + 1],
      ] as const)
        await store().keys.create({ id, accountId, hash: name('hash'), expiresAt: null }, at);
      const listed = await store().keys.listForAccount(accountId);
      assert.deepEqual(
        listed.map((key) => key.id),
        [`${stem}-B`, `${stem}-C`, `${stem}-a`, `${stem}-0`],
      );
      const paged: ApiKeyRecord[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (;;) {
        const page = await store().keys.pageForAccount({ accountId, after, limit: 1 });
        if (page.length === 0) break;
        paged.push(...page);
        const last = page.at(-1);
        after = last && { createdAt: last.createdAt, id: last.id };
      }
      assert.deepEqual(paged, listed);
      assert.deepEqual(
        await store().keys.pageForAccount({ accountId, after: undefined, limit: 3 }),
        listed.slice(0, 3),
      );
      assert.deepEqual(await store().keys.pageForAccount({ accountId: accountId + 1_000_000, after, limit: 5 }), []);
    });

    it('revokes a key once: revoking again keeps the first time; unknown keys report false', async () => {
      const accountId = await newAccountId();
      const key = await store().keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
      assert.equal(await store().keys.revoke(key.id, NOW + 10), true);
      assert.equal(await store().keys.revoke(key.id, NOW + 20), true);
      assert.equal((await store().keys.findById(key.id))?.revokedAt, NOW + 10);
      assert.equal(await store().keys.revoke('no-such-key', NOW), false);
    });

    it('records last-used times in a batch, never moving them back', async () => {
      const accountId = await newAccountId();
      const a = await store().keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
      const b = await store().keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
      const c = await store().keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
      await store().keys.recordLastUsed(new Map());
      await store().keys.recordLastUsed(
        new Map([
          [a.id, NOW + 100],
          [b.id, NOW + 200],
          ['no-such-key', NOW],
        ]),
      );
      await store().keys.recordLastUsed(
        new Map([
          [a.id, NOW + 50],
          [b.id, NOW + 300],
        ]),
      );
      assert.equal((await store().keys.findById(a.id))?.lastUsedAt, NOW + 100);
      assert.equal((await store().keys.findById(b.id))?.lastUsedAt, NOW + 300);
      assert.equal((await store().keys.findById(c.id))?.lastUsedAt, null);
    });
  });

  describe('bans', () => {
    it('bans a key, reports the ban on the key, counts bans and lifts them', async () => {
      const accountId = await newAccountId();
      const hash = name('hash');
      const key = await store().keys.create({ id: name('kid'), accountId, hash, expiresAt: null }, NOW);
      assert.equal(await store().bans.countSince(key.id, 0), 0);
      await store().bans.ban(key.id, NOW, NOW + 900_000);
      assert.equal((await store().keys.findPrincipalByHash(hash))?.bannedUntil, NOW + 900_000);
      assert.equal((await store().keys.findById(key.id))?.bannedUntil, NOW + 900_000);
      assert.equal((await store().keys.listForAccount(accountId))[0]?.bannedUntil, NOW + 900_000);
      await store().bans.ban(key.id, NOW + 1000, NOW + 1_801_000);
      assert.equal((await store().keys.findPrincipalByHash(hash))?.bannedUntil, NOW + 1_801_000);
      assert.equal(await store().bans.countSince(key.id, NOW), 2);
      assert.equal(await store().bans.countSince(key.id, NOW + 1), 1);

      assert.equal(await store().bans.lift(key.id, NOW + 2000), true);
      assert.equal((await store().keys.findPrincipalByHash(hash))?.bannedUntil, null);
      assert.equal(await store().bans.lift(key.id, NOW + 3000), false);
      assert.equal(await store().bans.countSince(key.id, NOW), 2, 'lifted bans still count for escalation');
      assert.equal(await store().bans.lift('no-such-key', NOW), false);
    });
  });
});
