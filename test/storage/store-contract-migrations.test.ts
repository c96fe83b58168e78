import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MIGRATION_NAMES } from '../../src/storage/migrations.ts';
import type { Store } from '../../src/domain/store.ts';
import { describeStoreContract, NOW, open } from './store-contract-suite.ts';

/**
 * The Store contract (test/storage/store-contract-suite.ts), on every backend: migrations, applied once
 * each however many instances run them at once and not at all when one fails, and the storage check.
 */

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

await describeStoreContract(({ backend, store, openFresh, closeAfter }) => {
  describe('migrations', () => {
    it('applies every migration once; a second run applies none', async () => {
      const fresh = await openFresh();
      assert.equal(await fresh.migrate(), MIGRATION_NAMES.length);
      assert.equal(await fresh.migrate(), 0);
    });

    it('three instances migrating the same database at once apply each migration exactly once', async () => {
      const url = await backend.freshDatabaseUrl();
      const instances = await Promise.all([open(url), open(url), open(url)]);
      closeAfter(...instances);
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
      closeAfter(broken);
      await assert.rejects(broken.migrate());
      await assert.rejects(broken.pets.get(1), 'nothing of migration 1 may remain');
      await backend.execute(url, 'DROP TABLE api_keys');
      assert.equal(await broken.migrate(), MIGRATION_NAMES.length);
    });
  });

  it('ping resolves while storage answers', async () => {
    await store().ping();
  });
});
