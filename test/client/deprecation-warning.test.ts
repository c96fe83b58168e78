import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEPRECATION_WARNING_CODE } from '@petstore/client';
import { request } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, deprecationWarningsOfSuite } from './client-fixtures.ts';

/**
 * getPet's deprecation is told once per process, however many clients and calls; this file owns that process
 * (deprecation-warning-fallback.test.ts has another). The warning reads the account's usage once and names its
 * calls of getPet in the last 30 days, from every key of the account, not only from this process.
 */

/** The instant of the test app's manual clock, which no test here moves. */
const NOW = '2026-06-01T12:00:00.000Z';

describe('client: deprecation warning of pets.get', () => {
  const app = appForSuite();
  const deprecation = deprecationWarningsOfSuite();

  it("warns exactly once, naming the sunset, the account's calls by key, the replacement and the note", async () => {
    const { key, keyId, account } = await app.newKey();
    const other = await app.services.accounts.createKey(account);
    const stranger = await app.newKey();
    const first = clientOf(app, key);
    const second = clientOf(app, key);
    const pet = await first.pets.create({ name: 'Rex', categoryId: 3 });
    // Other programs: another key of the account, and another account, which never shows.
    for (let i = 0; i < 3; i += 1)
      assert.equal((await request(app, `/v1/pets/${pet.id}`, { key: other.key })).status, 200);
    for (let i = 0; i < 5; i += 1) await request(app, `/v1/pets/${pet.id}`, { key: stranger.key });

    assert.deepEqual(await first.pets.get(pet.id), pet);
    const warning = await deprecation.first();
    assert.equal((warning as Error & { code?: string }).code, DEPRECATION_WARNING_CODE);
    assert.equal(
      warning.message,
      'GET /v1/pets/{petId} (client.pets.get) is deprecated and is removed on Thu, 05 Dec 2030 00:00:00 GMT; ' +
        'your account made 4 such calls in the last 30 days, from 2 keys: ' +
        `${other.record.id} (3, last ${NOW}), ${keyId} (1, last ${NOW}). ` +
        'Use GET /v1/pets with the status filter (client.pets.list({ status })) instead. ' +
        `Migration note: ${app.url}/docs#/pets/getPet`,
    );

    await first.pets.get(pet.id);
    await second.pets.get(pet.id);
    await second.pets.get(BigInt(pet.id) + 1n).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(deprecation.warnings.length, 1, deprecation.warnings.map((each) => each.message).join('\n'));
  });
});
