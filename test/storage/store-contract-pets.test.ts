import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PetRecord, PetStatus } from '../../src/domain/pet.ts';
import { describeStoreContract, INT64_MAX, INT64_MIN, name, NOW } from './store-contract-suite.ts';

/**
 * The Store contract (test/storage/store-contract-suite.ts), on every backend: pets, created, read and
 * paged with their int64 categories exact, and created once per idempotency key.
 */

const BEYOND_DOUBLE = 2n ** 53n + 1n;

await describeStoreContract(({ backend, store, openFresh, newAccountId }) => {
  describe('pets', () => {
    it('creates, gets and lists pets in ascending id order', async () => {
      const a = await store().pets.create({ name: 'Rex', categoryId: 7n, status: 'available' }, NOW);
      const b = await store().pets.create({ name: 'Tom', categoryId: 8n, status: null }, NOW);
      const c = await store().pets.create({ name: 'Kitty', categoryId: -3n, status: 'sold' }, NOW);
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0);
      assert.ok(a.id < b.id && b.id < c.id, 'ids increase');
      assert.deepEqual(a, { id: a.id, name: 'Rex', categoryId: 7n, status: 'available' });
      assert.deepEqual(await store().pets.get(a.id), a);
      assert.deepEqual(await store().pets.get(b.id), b);
      assert.equal(await store().pets.get(c.id + 1000), undefined);
      const listed = await store().pets.list({ afterId: a.id - 1, limit: 10, status: undefined });
      assert.deepEqual(listed.slice(0, 3), [a, b, c]);
      const all = await store().pets.list({ afterId: 0, limit: 1000, status: undefined });
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
        const pet = await store().pets.create({ name: `cat ${categoryId}`, categoryId, status: 'pending' }, NOW);
        assert.equal(typeof pet.categoryId, 'bigint');
        assert.equal(pet.categoryId, categoryId);
        const read = await store().pets.get(pet.id);
        assert.equal(read?.categoryId, categoryId);
        assert.equal(read?.categoryId.toString(), categoryId.toString());
        const [listed] = await store().pets.list({ afterId: pet.id - 1, limit: 1, status: 'pending' });
        assert.equal(listed?.categoryId, categoryId);
      }
    });

    it('100 concurrent creations get distinct increasing ids and are all readable', async () => {
      const before = await store().pets.list({ afterId: 0, limit: 100_000, status: undefined });
      const previousMax = before.reduce((max, pet) => Math.max(max, pet.id), 0);
      const created = await Promise.all(
        Array.from({ length: 100 }, (_unused, i) =>
          store().pets.create({ name: `burst ${i}`, categoryId: BigInt(i), status: 'available' }, NOW),
        ),
      );
      const ids = created.map((pet) => pet.id);
      assert.equal(new Set(ids).size, 100, 'ids are distinct');
      assert.ok(
        ids.every((id) => Number.isSafeInteger(id) && id > previousMax),
        'ids are above every earlier id',
      );
      for (const pet of created) assert.deepEqual(await store().pets.get(pet.id), pet);
      const listed = await store().pets.list({ afterId: previousMax, limit: 1000, status: undefined });
      assert.deepEqual(
        listed.map((pet) => pet.id),
        [...ids].sort((a, b) => a - b),
      );
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
      const first = await store().pets.createIdempotent({ name: 'Idem', categoryId: INT64_MAX, status: null }, NOW, {
        ...request(scope, 'fp-1'),
      });
      assert.equal(first.state, 'created');
      if (first.state !== 'created') return;
      const expected = { state: 'completed', fingerprint: 'fp-1', response: respond(first.pet) };
      const again = { name: 'Idem', categoryId: INT64_MAX, status: null };
      assert.deepEqual(await store().pets.createIdempotent(again, NOW + 1, request(scope, 'fp-1')), expected);
      // Another body under the key reports the first fingerprint and creates nothing.
      const other = { name: 'Other', categoryId: 1n, status: null };
      assert.deepEqual(await store().pets.createIdempotent(other, NOW + 10_000_000, request(scope, 'fp-2')), expected);
      assert.deepEqual(await store().pets.get(first.pet.id), first.pet);
      assert.equal(await store().pets.get(first.pet.id + 1), undefined, 'no second pet');
      // The same key in another account is independent.
      const elsewhere = { accountId: await newAccountId(), key: scope.key };
      assert.equal((await store().pets.createIdempotent(again, NOW, request(elsewhere, 'fp-9'))).state, 'created');
    });

    it('an unfinished claim left by an earlier release is no obstacle: the request creates', async () => {
      const scope = { accountId: await newAccountId(), key: name('idem') };
      await backend.execute(
        backend.databaseUrl,
        `INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at)
         VALUES (${scope.accountId}, '${scope.key}', 'fp-old', ${NOW})`,
      );
      const pet = { name: 'Claimed', categoryId: 1n, status: null };
      const outcome = await store().pets.createIdempotent(pet, NOW + 1, request(scope, 'fp-new'));
      assert.equal(outcome.state, 'created');
      assert.equal((await store().pets.createIdempotent(pet, NOW + 2, request(scope, 'fp-new'))).state, 'completed');
    });

    it('concurrent creations with one key: exactly one creates, every other replays it', async () => {
      const scope = { accountId: await newAccountId(), key: name('idem') };
      const pet = { name: name('racing'), categoryId: 1n, status: null };
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => store().pets.createIdempotent(pet, NOW, request(scope, 'fp'))),
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
      const account = await fresh.accounts.create({ name: 'purge', plan: 'free', perMinute: null, perDay: null }, NOW);
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
});
