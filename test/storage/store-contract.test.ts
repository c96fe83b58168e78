import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConflictError } from '../../src/errors.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { MIGRATION_NAMES } from '../../src/storage/migrations.ts';
import type { PetRecord, PetStatus } from '../../src/domain/pet.ts';
import type { AccountRecord } from '../../src/domain/accounts.ts';
import type { AuditEntryRecord, NewAuditEntry } from '../../src/domain/audit.ts';
import type { ApiKeyRecord } from '../../src/domain/keys.ts';
import type { Store } from '../../src/domain/store.ts';
import { backends, pgBouncerBackend } from '../support/backends.ts';

/**
 * One contract for every Store backend: the same cases run against SQLite and PostgreSQL, so the
 * two cannot drift apart, and against PostgreSQL through PgBouncer in transaction mode, so nothing
 * comes to rely on a session of its own.
 */

const NOW = Date.UTC(2026, 5, 1, 12);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const BEYOND_DOUBLE = 2n ** 53n + 1n;

function open(databaseUrl: string): Promise<Store> {
  return openStore({ databaseUrl, pgPoolSize: 10, storageTimeoutMs: 5000 });
}

let unique = 0;
function name(prefix: string): string {
  unique += 1;
  return `${prefix}-${unique}`;
}

it('migration names are numbered upward from 0001, so they sort as they must run', () => {
  const numbers = MIGRATION_NAMES.map((name) => /^(\d{4})-[a-z0-9-]+$/.exec(name)?.[1]);
  assert.ok(
    numbers.every((number) => number !== undefined),
    `four digits, a dash, a name: ${MIGRATION_NAMES.join(', ')}`,
  );
  assert.equal(numbers[0], '0001');
  // A number may be left out: one taken by a change made on another branch at the same time.
  assert.ok(
    numbers.every((number, index) => index === 0 || Number(number) > Number(numbers[index - 1])),
    `each above the one before: ${MIGRATION_NAMES.join(', ')}`,
  );
});

for (const backend of [...(await backends()), await pgBouncerBackend()]) {
  describe(`Store contract: ${backend.label}`, { skip: backend.skip }, () => {
    let store: Store;
    const extraStores: Store[] = [];

    before(async () => {
      store = await open(backend.databaseUrl);
      assert.equal(store.backend, backend.name);
      await store.migrate();
    });

    after(async () => {
      await store?.close();
      for (const extra of extraStores) await extra.close().catch(() => undefined);
      await backend.cleanup();
    });

    async function openFresh(): Promise<Store> {
      const opened = await open(await backend.freshDatabaseUrl());
      extraStores.push(opened);
      return opened;
    }

    async function newAccountId(): Promise<number> {
      return (await store.accounts.create({ name: name('acct'), plan: 'free', perMinute: null, perDay: null }, NOW)).id;
    }

    describe('migrations', () => {
      it('applies every migration once; a second run applies none', async () => {
        const fresh = await openFresh();
        assert.equal(await fresh.migrate(), MIGRATION_NAMES.length);
        assert.equal(await fresh.migrate(), 0);
      });

      it('three instances migrating the same database at once apply each migration exactly once', async () => {
        const url = await backend.freshDatabaseUrl();
        const instances = await Promise.all([open(url), open(url), open(url)]);
        extraStores.push(...instances);
        const counts = await Promise.all(instances.map((instance) => instance.migrate()));
        assert.deepEqual(
          [...counts].sort((a, b) => a - b),
          [0, 0, MIGRATION_NAMES.length],
        );
        for (const instance of instances) assert.equal(await instance.migrate(), 0);
        // The schema works from every instance.
        const pet = await (instances[1] as Store).pets.create({ name: 'shared', categoryId: 1n, status: null }, NOW);
        assert.deepEqual(await (instances[2] as Store).pets.get(pet.id), pet);
      });

      it('a failing migration rejects and leaves nothing applied', async () => {
        const url = await backend.freshDatabaseUrl();
        // A table in the way makes migration 1 fail half-way.
        await backend.execute(url, 'CREATE TABLE api_keys (unrelated integer)');
        const broken = await open(url);
        extraStores.push(broken);
        await assert.rejects(broken.migrate());
        await assert.rejects(broken.pets.get(1), 'nothing of migration 1 may remain');
        await backend.execute(url, 'DROP TABLE api_keys');
        assert.equal(await broken.migrate(), MIGRATION_NAMES.length);
      });
    });

    describe('pets', () => {
      it('creates, gets and lists pets in ascending id order', async () => {
        const a = await store.pets.create({ name: 'Rex', categoryId: 7n, status: 'available' }, NOW);
        const b = await store.pets.create({ name: 'Tom', categoryId: 8n, status: null }, NOW);
        const c = await store.pets.create({ name: 'Kitty', categoryId: -3n, status: 'sold' }, NOW);
        assert.ok(Number.isSafeInteger(a.id) && a.id > 0);
        assert.ok(a.id < b.id && b.id < c.id, 'ids increase');
        assert.deepEqual(a, { id: a.id, name: 'Rex', categoryId: 7n, status: 'available' });
        assert.deepEqual(await store.pets.get(a.id), a);
        assert.deepEqual(await store.pets.get(b.id), b);
        assert.equal(await store.pets.get(c.id + 1000), undefined);
        const listed = await store.pets.list({ afterId: a.id - 1, limit: 10, status: undefined });
        assert.deepEqual(listed.slice(0, 3), [a, b, c]);
        const all = await store.pets.list({ afterId: 0, limit: 1000, status: undefined });
        assert.deepEqual(
          all.map((pet) => pet.id),
          all.map((pet) => pet.id).sort((x, y) => x - y),
        );
      });

      it('paginates with afterId and limit, with and without a status filter', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const statuses: Array<PetStatus | null> = ['available', 'pending', 'sold', null];
        const created: PetRecord[] = [];
        for (let i = 0; i < 10; i += 1) {
          created.push(
            await fresh.pets.create({ name: `p${i}`, categoryId: BigInt(i), status: statuses[i % 4] ?? null }, NOW),
          );
        }
        const pages: PetRecord[][] = [];
        let afterId = 0;
        for (;;) {
          const page = await fresh.pets.list({ afterId, limit: 3, status: undefined });
          if (page.length === 0) break;
          pages.push(page);
          afterId = (page[page.length - 1] as PetRecord).id;
        }
        assert.deepEqual(
          pages.map((page) => page.length),
          [3, 3, 3, 1],
        );
        assert.deepEqual(pages.flat(), created);

        const available = created.filter((pet) => pet.status === 'available');
        const first = await fresh.pets.list({ afterId: 0, limit: 2, status: 'available' });
        assert.deepEqual(first, available.slice(0, 2));
        const second = await fresh.pets.list({ afterId: (first[1] as PetRecord).id, limit: 2, status: 'available' });
        assert.deepEqual(second, available.slice(2));
        assert.deepEqual(
          await fresh.pets.list({ afterId: (created[9] as PetRecord).id, limit: 5, status: undefined }),
          [],
        );
      });

      it('a pet without status matches no status filter', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const none = await fresh.pets.create({ name: 'Nobody', categoryId: 1n, status: null }, NOW);
        assert.equal(none.status, null);
        assert.equal((await fresh.pets.get(none.id))?.status, null);
        for (const status of ['available', 'pending', 'sold'] as const) {
          assert.deepEqual(await fresh.pets.list({ afterId: 0, limit: 10, status }), []);
        }
        assert.deepEqual(await fresh.pets.list({ afterId: 0, limit: 10, status: undefined }), [none]);
      });

      it('keeps categoryId exact across the whole int64 range', async () => {
        for (const categoryId of [INT64_MIN, INT64_MAX, BEYOND_DOUBLE, -BEYOND_DOUBLE, 0n]) {
          const pet = await store.pets.create({ name: `cat ${categoryId}`, categoryId, status: 'pending' }, NOW);
          assert.equal(typeof pet.categoryId, 'bigint');
          assert.equal(pet.categoryId, categoryId);
          const read = await store.pets.get(pet.id);
          assert.equal(read?.categoryId, categoryId);
          assert.equal(read?.categoryId.toString(), categoryId.toString());
          const [listed] = await store.pets.list({ afterId: pet.id - 1, limit: 1, status: 'pending' });
          assert.equal(listed?.categoryId, categoryId);
        }
      });

      it('100 concurrent creations get distinct increasing ids and are all readable', async () => {
        const before = await store.pets.list({ afterId: 0, limit: 100_000, status: undefined });
        const previousMax = before.reduce((max, pet) => Math.max(max, pet.id), 0);
        const created = await Promise.all(
          Array.from({ length: 100 }, (_unused, i) =>
            store.pets.create({ name: `burst ${i}`, categoryId: BigInt(i), status: 'available' }, NOW),
          ),
        );
        const ids = created.map((pet) => pet.id);
        assert.equal(new Set(ids).size, 100, 'ids are distinct');
        assert.ok(
          ids.every((id) => Number.isSafeInteger(id) && id > previousMax),
          'ids are above every earlier id',
        );
        for (const pet of created) assert.deepEqual(await store.pets.get(pet.id), pet);
        const listed = await store.pets.list({ afterId: previousMax, limit: 1000, status: undefined });
        assert.deepEqual(
          listed.map((pet) => pet.id),
          [...ids].sort((a, b) => a - b),
        );
      });
    });

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

        assert.deepEqual(
          await fresh.accounts.page({ nameContains: undefined, afterId: 0, limit: 2 }),
          made.slice(0, 2),
        );
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
        await store.keys.create({ id: name('kid'), accountId: a, hash: name('hash'), expiresAt: null }, NOW);
        await store.keys.create({ id: name('kid'), accountId: b, hash: name('hash'), expiresAt: NOW }, NOW);
        const stats = await store.accounts.keyStats(NOW + 1, [b]);
        assert.deepEqual([...stats], [[b, { total: 1, active: 0, lastUsedAt: null }]]);
        assert.deepEqual(await store.accounts.keyStats(NOW, []), new Map());
      });

      it('rejects a taken name with ConflictError and keeps the first account', async () => {
        const taken = name('taken');
        const first = await store.accounts.create({ name: taken, plan: 'pro', perMinute: null, perDay: null }, NOW);
        await assert.rejects(
          store.accounts.create({ name: taken, plan: 'free', perMinute: null, perDay: null }, NOW),
          ConflictError,
        );
        assert.deepEqual(await store.accounts.findByName(taken), first);
        // The store stays usable after the conflict.
        assert.ok((await store.accounts.count()) >= 1);
      });
    });

    describe('keys', () => {
      it('creates keys and finds them by hash and by id, and lists them per account', async () => {
        const accountName = name('keys');
        const account = await store.accounts.create(
          { name: accountName, plan: 'business', perMinute: null, perDay: null },
          NOW,
        );
        const hash = name('hash-a');
        const first = await store.keys.create(
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
        const second = await store.keys.create(
          { id: name('kid-a'), accountId: account.id, hash: readOnlyHash, expiresAt: null, scopes: ['pets:read'] },
          NOW + 5,
        );
        assert.deepEqual(second.scopes, ['pets:read']);
        assert.deepEqual((await store.keys.findPrincipalByHash(readOnlyHash))?.scopes, ['pets:read']);
        assert.deepEqual(await store.keys.findPrincipalByHash(hash), {
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
        assert.equal(await store.keys.findPrincipalByHash('no-such-hash'), undefined);
        assert.deepEqual(await store.keys.findById(first.id), first);
        assert.equal(await store.keys.findById('no-such-key'), undefined);
        assert.deepEqual(await store.keys.listForAccount(account.id), [first, second]);
        assert.deepEqual(await store.keys.listForAccount(account.id + 1_000_000), []);

        await store.accounts.setPlan(accountName, 'enterprise', { perMinute: 10, perDay: 20 });
        const principal = await store.keys.findPrincipalByHash(hash);
        assert.equal(principal?.plan, 'enterprise');
        assert.equal(principal?.perMinute, 10);
        assert.equal(principal?.perDay, 20);
      });

      it('keeps who created and who first revoked a key, its name, and counts the active keys', async () => {
        const account = await store.accounts.create(
          { name: name('holder'), plan: 'free', perMinute: null, perDay: null },
          NOW,
        );
        assert.equal((await store.accounts.setKeyLimit(account.name, 3))?.keyLimit, 3);
        assert.equal(await store.accounts.setKeyLimit(name('nobody'), 3), undefined);
        const made = await store.keys.create(
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
        const byCli = await store.keys.create(
          {
            id: name('kid-cli'),
            accountId: account.id,
            hash: name('hash-cli'),
            expiresAt: NOW + 10,
            createdBy: { kind: 'cli', user: 'ops:admin' },
          },
          NOW,
        );
        assert.deepEqual((await store.keys.findById(byCli.id))?.createdBy, { kind: 'cli', user: 'ops:admin' });
        assert.equal(await store.keys.countActive(account.id, NOW), 2);
        assert.equal(await store.keys.countActive(account.id, NOW + 10), 1, 'an expired key is not active');

        assert.equal(await store.keys.revoke(made.id, NOW + 1, { kind: 'operator_token', id: 'tok' }), true);
        assert.equal(await store.keys.revoke(made.id, NOW + 2, { kind: 'key', id: 'key_late' }), true);
        const revoked = await store.keys.findById(made.id);
        assert.deepEqual([revoked?.revokedAt, revoked?.revokedBy], [NOW + 1, { kind: 'operator_token', id: 'tok' }]);
        assert.equal(await store.keys.countActive(account.id, NOW), 1);

        // An expiry is brought forward, never pushed back.
        assert.equal(await store.keys.expireBy(byCli.id, NOW + 5), true);
        assert.equal((await store.keys.findById(byCli.id))?.expiresAt, NOW + 5);
        await store.keys.expireBy(byCli.id, NOW + 50);
        assert.equal((await store.keys.findById(byCli.id))?.expiresAt, NOW + 5);
        assert.equal(await store.keys.expireBy(name('no-such-key'), NOW), false);
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
          await store.keys.create({ id, accountId, hash: name('hash'), expiresAt: null }, at);
        const listed = await store.keys.listForAccount(accountId);
        assert.deepEqual(
          listed.map((key) => key.id),
          [`${stem}-B`, `${stem}-C`, `${stem}-a`, `${stem}-0`],
        );
        const paged: ApiKeyRecord[] = [];
        let after: { createdAt: number; id: string } | undefined;
        for (;;) {
          const page = await store.keys.pageForAccount({ accountId, after, limit: 1 });
          if (page.length === 0) break;
          paged.push(...page);
          const last = page.at(-1);
          after = last && { createdAt: last.createdAt, id: last.id };
        }
        assert.deepEqual(paged, listed);
        assert.deepEqual(
          await store.keys.pageForAccount({ accountId, after: undefined, limit: 3 }),
          listed.slice(0, 3),
        );
        assert.deepEqual(await store.keys.pageForAccount({ accountId: accountId + 1_000_000, after, limit: 5 }), []);
      });

      it('revokes a key once: revoking again keeps the first time; unknown keys report false', async () => {
        const accountId = await newAccountId();
        const key = await store.keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
        assert.equal(await store.keys.revoke(key.id, NOW + 10), true);
        assert.equal(await store.keys.revoke(key.id, NOW + 20), true);
        assert.equal((await store.keys.findById(key.id))?.revokedAt, NOW + 10);
        assert.equal(await store.keys.revoke('no-such-key', NOW), false);
      });

      it('records last-used times in a batch, never moving them back', async () => {
        const accountId = await newAccountId();
        const a = await store.keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
        const b = await store.keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
        const c = await store.keys.create({ id: name('kid'), accountId, hash: name('hash'), expiresAt: null }, NOW);
        await store.keys.recordLastUsed(new Map());
        await store.keys.recordLastUsed(
          new Map([
            [a.id, NOW + 100],
            [b.id, NOW + 200],
            ['no-such-key', NOW],
          ]),
        );
        await store.keys.recordLastUsed(
          new Map([
            [a.id, NOW + 50],
            [b.id, NOW + 300],
          ]),
        );
        assert.equal((await store.keys.findById(a.id))?.lastUsedAt, NOW + 100);
        assert.equal((await store.keys.findById(b.id))?.lastUsedAt, NOW + 300);
        assert.equal((await store.keys.findById(c.id))?.lastUsedAt, null);
      });
    });

    describe('bans', () => {
      it('bans a key, reports the ban on the key, counts bans and lifts them', async () => {
        const accountId = await newAccountId();
        const hash = name('hash');
        const key = await store.keys.create({ id: name('kid'), accountId, hash, expiresAt: null }, NOW);
        assert.equal(await store.bans.countSince(key.id, 0), 0);
        await store.bans.ban(key.id, NOW, NOW + 900_000);
        assert.equal((await store.keys.findPrincipalByHash(hash))?.bannedUntil, NOW + 900_000);
        assert.equal((await store.keys.findById(key.id))?.bannedUntil, NOW + 900_000);
        assert.equal((await store.keys.listForAccount(accountId))[0]?.bannedUntil, NOW + 900_000);
        await store.bans.ban(key.id, NOW + 1000, NOW + 1_801_000);
        assert.equal((await store.keys.findPrincipalByHash(hash))?.bannedUntil, NOW + 1_801_000);
        assert.equal(await store.bans.countSince(key.id, NOW), 2);
        assert.equal(await store.bans.countSince(key.id, NOW + 1), 1);

        assert.equal(await store.bans.lift(key.id, NOW + 2000), true);
        assert.equal((await store.keys.findPrincipalByHash(hash))?.bannedUntil, null);
        assert.equal(await store.bans.lift(key.id, NOW + 3000), false);
        assert.equal(await store.bans.countSince(key.id, NOW), 2, 'lifted bans still count for escalation');
        assert.equal(await store.bans.lift('no-such-key', NOW), false);
      });
    });

    describe('idempotency', () => {
      const respond = (pet: PetRecord): { statusCode: number; body: string } => ({
        statusCode: 201,
        body: JSON.stringify({ id: pet.id, name: pet.name, categoryId: pet.categoryId.toString() }),
      });

      const request = (scope: { accountId: number; key: string }, fingerprint: string) => ({
        ...scope,
        fingerprint,
        respond,
      });

      it('creates the pet with its record in one commit, then replays the record, however old', async () => {
        const accountId = await newAccountId();
        const scope = { accountId, key: name('idem') };
        const first = await store.pets.createIdempotent({ name: 'Idem', categoryId: INT64_MAX, status: null }, NOW, {
          ...request(scope, 'fp-1'),
        });
        assert.equal(first.state, 'created');
        if (first.state !== 'created') return;
        const expected = { state: 'completed', fingerprint: 'fp-1', response: respond(first.pet) };
        const again = { name: 'Idem', categoryId: INT64_MAX, status: null };
        assert.deepEqual(await store.pets.createIdempotent(again, NOW + 1, request(scope, 'fp-1')), expected);
        // Another body under the key reports the first fingerprint and creates nothing.
        const other = { name: 'Other', categoryId: 1n, status: null };
        assert.deepEqual(await store.pets.createIdempotent(other, NOW + 10_000_000, request(scope, 'fp-2')), expected);
        assert.deepEqual(await store.pets.get(first.pet.id), first.pet);
        assert.equal(await store.pets.get(first.pet.id + 1), undefined, 'no second pet');
        // The same key in another account is independent.
        const elsewhere = { accountId: await newAccountId(), key: scope.key };
        assert.equal((await store.pets.createIdempotent(again, NOW, request(elsewhere, 'fp-9'))).state, 'created');
      });

      it('an unfinished claim left by an earlier release is no obstacle: the request creates', async () => {
        const scope = { accountId: await newAccountId(), key: name('idem') };
        await backend.execute(
          backend.databaseUrl,
          `INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at)
           VALUES (${scope.accountId}, '${scope.key}', 'fp-old', ${NOW})`,
        );
        const pet = { name: 'Claimed', categoryId: 1n, status: null };
        const outcome = await store.pets.createIdempotent(pet, NOW + 1, request(scope, 'fp-new'));
        assert.equal(outcome.state, 'created');
        assert.equal((await store.pets.createIdempotent(pet, NOW + 2, request(scope, 'fp-new'))).state, 'completed');
      });

      it('concurrent creations with one key: exactly one creates, every other replays it', async () => {
        const scope = { accountId: await newAccountId(), key: name('idem') };
        const pet = { name: name('racing'), categoryId: 1n, status: null };
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, () => store.pets.createIdempotent(pet, NOW, request(scope, 'fp'))),
        );
        const created = outcomes.flatMap((outcome) => (outcome.state === 'created' ? [outcome.pet] : []));
        assert.equal(created.length, 1);
        const response = respond(created[0] as PetRecord);
        for (const outcome of outcomes) {
          if (outcome.state === 'completed') assert.deepEqual(outcome.response, response);
        }
      });

      it('purges records created before a time and reports how many', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const account = await fresh.accounts.create(
          { name: 'purge', plan: 'free', perMinute: null, perDay: null },
          NOW,
        );
        const pet = { name: 'kept', categoryId: 1n, status: null };
        const scope = (key: string) => request({ accountId: account.id, key }, 'fp');
        await fresh.pets.createIdempotent(pet, NOW - 2000, scope('k1'));
        const kept = await fresh.pets.createIdempotent(pet, NOW - 1000, scope('k2'));
        await fresh.pets.createIdempotent(pet, NOW, scope('k3'));
        assert.equal(await fresh.idempotency.purge(NOW - 1000), 1);
        assert.equal(await fresh.idempotency.purge(NOW - 1000), 0);
        assert.equal((await fresh.pets.createIdempotent(pet, NOW, scope('k1'))).state, 'created');
        assert.equal((await fresh.pets.createIdempotent(pet, NOW, scope('k2'))).state, 'completed');
        assert.equal(await fresh.idempotency.purge(NOW + 1), 3);
        assert.ok(kept.state === 'created');
        assert.deepEqual(await fresh.pets.get(kept.pet.id), kept.pet, 'purging keys keeps the pets');
      });
    });

    describe('operator sessions', () => {
      async function newToken(): Promise<string> {
        return (await store.operatorTokens.create({ id: name('tok'), hash: name('h'), name: 'ops' }, NOW)).id;
      }

      it('starts a session by its hash and finds it with its token, in one read', async () => {
        const tokenId = await newToken();
        const hash = name('session');
        await store.operatorSessions.start({ hash, tokenId }, NOW + 5);
        assert.deepEqual(await store.operatorSessions.find(hash), {
          startedAt: NOW + 5,
          lastSeenAt: NOW + 5,
          endedAt: null,
          token: { id: tokenId, name: 'ops', createdAt: NOW, revokedAt: null, lastUsedAt: null },
        });
        assert.equal(await store.operatorSessions.find('no-such-session'), undefined);
        await assert.rejects(
          store.operatorSessions.start({ hash, tokenId }, NOW),
          (error: unknown) => error instanceof ConflictError,
        );
        // The token as it is now: its revocation shows on the session's next read.
        await store.operatorTokens.revoke(tokenId, NOW + 9);
        assert.equal((await store.operatorSessions.find(hash))?.token.revokedAt, NOW + 9);
      });

      it('records uses forward only, and none once ended; ends once, keeping the first time', async () => {
        const tokenId = await newToken();
        const hash = name('session');
        await store.operatorSessions.start({ hash, tokenId }, NOW);
        assert.equal(await store.operatorSessions.touch(hash, NOW + 100), true);
        assert.equal(await store.operatorSessions.touch(hash, NOW + 50), false);
        assert.equal((await store.operatorSessions.find(hash))?.lastSeenAt, NOW + 100);
        assert.equal(await store.operatorSessions.end(hash, NOW + 200), true);
        assert.equal(await store.operatorSessions.end(hash, NOW + 300), false);
        assert.equal(await store.operatorSessions.touch(hash, NOW + 400), false);
        const ended = await store.operatorSessions.find(hash);
        assert.deepEqual([ended?.lastSeenAt, ended?.endedAt], [NOW + 100, NOW + 200]);
        assert.equal(await store.operatorSessions.end('no-such-session', NOW), false);
        assert.equal(await store.operatorSessions.touch('no-such-session', NOW), false);
      });

      it("ends every open session of a token, and only that token's", async () => {
        const [tokenId, otherId] = [await newToken(), await newToken()];
        const [open1, open2, ended, other] = [name('s'), name('s'), name('s'), name('s')];
        for (const hash of [open1, open2, ended]) await store.operatorSessions.start({ hash, tokenId }, NOW);
        await store.operatorSessions.start({ hash: other, tokenId: otherId }, NOW);
        await store.operatorSessions.end(ended, NOW + 1);
        assert.equal(await store.operatorSessions.endForToken(tokenId, NOW + 10), 2);
        assert.equal(await store.operatorSessions.endForToken(tokenId, NOW + 20), 0);
        for (const [hash, endedAt] of [
          [open1, NOW + 10],
          [open2, NOW + 10],
          [ended, NOW + 1],
          [other, null],
        ] as const) {
          assert.equal((await store.operatorSessions.find(hash))?.endedAt, endedAt, hash);
        }
      });

      it('purges sessions ended, last seen or started before the cutoffs, and keeps the others', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const tokenId = (await fresh.operatorTokens.create({ id: 'tok', hash: 'h', name: null }, NOW)).id;
        const start = (hash: string, at: number) => fresh.operatorSessions.start({ hash, tokenId }, at);
        await start('ended-early', NOW);
        await fresh.operatorSessions.end('ended-early', NOW + 10);
        await start('idle', NOW);
        await start('long', NOW - 1000);
        await fresh.operatorSessions.touch('long', NOW + 500);
        await start('kept', NOW + 100);
        await fresh.operatorSessions.end('kept', NOW + 200);
        const cutoffs = { endedBefore: NOW + 100, lastSeenBefore: NOW + 1, startedBefore: NOW - 500 };
        assert.equal(await fresh.operatorSessions.purge(cutoffs), 3);
        for (const hash of ['ended-early', 'idle', 'long'])
          assert.equal(await fresh.operatorSessions.find(hash), undefined, hash);
        assert.ok(await fresh.operatorSessions.find('kept'));
        assert.equal(await fresh.operatorSessions.purge(cutoffs), 0);
      });
    });

    describe('audit trail', () => {
      const byToken = {
        actor: { kind: 'operator_token', id: 'AbCdEfGh01234567', name: 'ops' },
        via: 'api',
        requestId: 'req-1',
      };
      const byCli = { actor: { kind: 'cli', user: 'alice' }, via: 'cli', requestId: null };
      const entry = (at: number, fields: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
        at,
        ...(byToken as Pick<NewAuditEntry, 'actor' | 'via' | 'requestId'>),
        action: 'account.update',
        target: { type: 'account', id: 'acme' },
        before: { plan: 'free', limits: { perMinute: 60, perDay: 1000 } },
        after: { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } },
        ...fields,
      });
      const withoutIds = (entries: readonly AuditEntryRecord[]) =>
        entries.map((stored) => Object.fromEntries(Object.entries(stored).filter(([field]) => field !== 'id')));

      it('stores the entry in the transaction of its change: both are written, or neither', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const written = entry(NOW, { action: 'account.create', target: { type: 'account', id: 'acme' }, before: null });
        const account = await fresh.audit.change(async ({ accounts }) => {
          const created = await accounts.create({ name: 'acme', plan: 'pro', perMinute: null, perDay: null }, NOW);
          assert.deepEqual(await accounts.findByName('acme'), created, 'the change reads its own writes');
          return { result: created, entry: written };
        });
        assert.deepEqual(await fresh.accounts.findByName('acme'), account);
        const [stored, ...more] = await fresh.audit.list({ limit: 10 });
        assert.deepEqual(more, []);
        assert.ok(stored !== undefined && Number.isSafeInteger(stored.id) && stored.id > 0);
        assert.deepEqual(withoutIds([stored]), [written]);

        // A change that fails after writing leaves neither its write nor its entry.
        await assert.rejects(
          fresh.audit.change(async ({ accounts }) => {
            await accounts.create({ name: 'ghost', plan: 'free', perMinute: null, perDay: null }, NOW);
            throw new Error('the change fails half-way');
          }),
          /half-way/,
        );
        // A write the store refuses (a taken name) writes no entry either.
        await assert.rejects(
          fresh.audit.change(async ({ accounts }) => ({
            result: await accounts.create({ name: 'acme', plan: 'free', perMinute: null, perDay: null }, NOW),
            entry: entry(NOW + 1),
          })),
          ConflictError,
        );
        assert.equal(await fresh.accounts.findByName('ghost'), undefined);
        assert.equal((await fresh.audit.list({ limit: 10 })).length, 1);

        // Without an entry the change commits alone; a record stands on its own.
        await fresh.audit.change(async ({ keys }) => ({
          result: await keys.create({ id: 'k-plain', accountId: account.id, hash: 'h-plain', expiresAt: null }, NOW),
          entry: undefined,
        }));
        assert.equal((await fresh.keys.findById('k-plain'))?.id, 'k-plain');
        await fresh.audit.record(entry(NOW + 2, { action: 'ban.lift', target: { type: 'key', id: 'k-plain' } }));
        assert.deepEqual(
          (await fresh.audit.list({ limit: 10 })).map((stored) => stored.action),
          ['ban.lift', 'account.create'],
        );
      });

      it('filters by actor, target, action, via and time, newest first, and pages by position', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        const cli = byCli as Pick<NewAuditEntry, 'actor' | 'via' | 'requestId'>;
        const bob = { actor: { kind: 'cli', user: 'bob' }, via: 'cli', requestId: null } as Pick<
          NewAuditEntry,
          'actor' | 'via' | 'requestId'
        >;
        const written = [
          entry(NOW),
          entry(NOW + 1000, { ...cli, action: 'key.create', target: { type: 'key', id: 'key_1' }, before: null }),
          entry(NOW + 1000, { ...bob, action: 'key.revoke', target: { type: 'key', id: 'key_1' } }),
          entry(NOW + 2000, { via: 'console', target: { type: 'account', id: 'other' } }),
          entry(NOW + 3000, {
            action: 'operator_token.revoke',
            target: { type: 'operator_token', id: 'Zz00000000000000' },
            before: { revokedAt: null },
            after: { revokedAt: new Date(NOW + 3000).toISOString() },
          }),
        ];
        for (const one of written) await fresh.audit.record(one);
        const all = await fresh.audit.list({ limit: 100 });
        // Newest first; of two at the same time, the later written first.
        assert.deepEqual(withoutIds(all), [written[4], written[3], written[2], written[1], written[0]]);
        const actions = async (query: Omit<Parameters<Store['audit']['list']>[0], 'limit'>) =>
          (await fresh.audit.list({ ...query, limit: 100 })).map((stored) => `${stored.action} ${stored.target.id}`);
        assert.deepEqual(await actions({ actor: { kind: 'cli' } }), ['key.revoke key_1', 'key.create key_1']);
        assert.deepEqual(await actions({ actor: { kind: 'cli', id: 'alice' } }), ['key.create key_1']);
        assert.deepEqual(await actions({ actor: { kind: 'operator_token', id: 'AbCdEfGh01234567' } }), [
          'operator_token.revoke Zz00000000000000',
          'account.update other',
          'account.update acme',
        ]);
        assert.deepEqual(await actions({ actor: { kind: 'operator_token', id: 'AbCdEfGh0123456X' } }), []);
        assert.deepEqual(await actions({ target: { type: 'account', id: 'acme' } }), ['account.update acme']);
        assert.deepEqual(await actions({ target: { type: 'key' } }), ['key.revoke key_1', 'key.create key_1']);
        assert.deepEqual(await actions({ action: 'account.update' }), ['account.update other', 'account.update acme']);
        assert.deepEqual(await actions({ via: 'console' }), ['account.update other']);
        assert.deepEqual(await actions({ via: 'api' }), [
          'operator_token.revoke Zz00000000000000',
          'account.update acme',
        ]);
        assert.deepEqual(await actions({ via: 'cli' }), ['key.revoke key_1', 'key.create key_1']);
        assert.deepEqual(await actions({ from: NOW + 1000, to: NOW + 3000 }), [
          'account.update other',
          'key.revoke key_1',
          'key.create key_1',
        ]);
        assert.deepEqual(await actions({ action: 'account.update', from: NOW + 1, target: { type: 'account' } }), [
          'account.update other',
        ]);

        // Pages of two, each after the last entry of the one before: every entry once, in order.
        const pages: AuditEntryRecord[][] = [];
        let olderThan: { at: number; id: number } | undefined;
        for (;;) {
          const page = await fresh.audit.list({ limit: 2, ...(olderThan === undefined ? {} : { olderThan }) });
          if (page.length === 0) break;
          pages.push(page);
          const last = page.at(-1) as AuditEntryRecord;
          olderThan = { at: last.at, id: last.id };
        }
        assert.deepEqual(
          pages.map((page) => page.length),
          [2, 2, 1],
        );
        assert.deepEqual(pages.flat(), all);
        const [, second] = all as [AuditEntryRecord, AuditEntryRecord];
        assert.deepEqual(await actions({ actor: { kind: 'cli' }, olderThan: { at: second.at, id: second.id } }), [
          'key.revoke key_1',
          'key.create key_1',
        ]);
      });

      it('a change reads the values it replaces, however many change the same row at once', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        await fresh.accounts.create({ name: 'contended', plan: 'enterprise', perMinute: 1, perDay: 1 }, NOW);
        const changes = Array.from({ length: 8 }, (_unused, index) =>
          fresh.audit.change(async ({ accounts }) => {
            const found = await accounts.findByName('contended');
            // Gives the others time to read the row before this one writes it, were it not locked.
            await new Promise((resolve) => setTimeout(resolve, 5));
            const changed = await accounts.setPlan('contended', 'enterprise', {
              perMinute: index + 2,
              perDay: index + 2,
            });
            return {
              result: changed,
              entry: entry(NOW, { before: { perMinute: found?.perMinute ?? null }, after: { perMinute: index + 2 } }),
            };
          }),
        );
        await Promise.all(changes);
        const stored = await fresh.audit.list({ limit: 100 });
        // Each change replaced what the one before it wrote: the befores are the first value and all afters but one.
        const befores = stored.map((one) => one.before?.perMinute).sort();
        const afters = stored.map((one) => one.after?.perMinute);
        const last = (await fresh.accounts.findByName('contended'))?.perMinute;
        assert.deepEqual(befores, [1, ...afters.filter((value) => value !== last)].sort(), JSON.stringify(stored));
      });

      it('purges the entries before a time and reports how many', async () => {
        const fresh = await openFresh();
        await fresh.migrate();
        for (const at of [NOW - 2000, NOW - 1000, NOW]) await fresh.audit.record(entry(at));
        assert.equal(await fresh.audit.purge(NOW - 1000), 1);
        assert.equal(await fresh.audit.purge(NOW - 1000), 0);
        assert.deepEqual(
          (await fresh.audit.list({ limit: 10 })).map((stored) => stored.at),
          [NOW, NOW - 1000],
        );
      });
    });

    it('ping resolves while storage answers', async () => {
      await store.ping();
    });
  });
}
