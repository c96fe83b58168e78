import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Fetch } from '@petstore/client';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, deprecationWarningsOfSuite } from './client-fixtures.ts';

/**
 * When the warning's one read of the account's usage fails, the warning is still given once, with the text
 * it had before it named the account's calls, and the call that led to it is unaffected. This file owns its
 * process: the warning is given once per process.
 */

describe('client: deprecation warning when the usage cannot be read', () => {
  const app = appForSuite();
  const deprecation = deprecationWarningsOfSuite();

  it('warns once with the plain text, reading the usage only once', async () => {
    const usageReads: string[] = [];
    // A usage answer that fails without a retry; every other request reaches the app.
    const failingUsage: Fetch = async (input, init) => {
      if (new URL(String(input)).pathname === '/v1/usage') {
        usageReads.push(String(input));
        const body = { code: 'internal_error', message: 'the usage store fell over', status: 500 };
        return new Response(JSON.stringify(body), { status: 500, headers: { 'content-type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const { key } = await app.newKey();
    const client = clientOf(app, key, { fetch: failingUsage });
    const other = clientOf(app, key, { fetch: failingUsage });
    const pet = await client.pets.create({ name: 'Rex', categoryId: 3 });
    assert.deepEqual(await client.pets.get(pet.id), pet, 'the call itself is unaffected');
    await deprecation.first();
    await client.pets.get(pet.id);
    await other.pets.get(pet.id);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(
      deprecation.warnings.map((warning) => warning.message),
      [
        'GET /v1/pets/{petId} (client.pets.get) is deprecated and is removed on Thu, 05 Dec 2030 00:00:00 GMT; ' +
          'use GET /v1/pets with the status filter (client.pets.list({ status })) instead. ' +
          `Migration note: ${app.url}/docs#/pets/getPet`,
      ],
    );
    assert.equal(usageReads.length, 1, 'one read of the usage, however many deprecated answers');
  });
});
