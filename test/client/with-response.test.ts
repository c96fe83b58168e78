import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { PetstoreClient } from '@petstore/client';
import { type Pet, type PetstoreResponse } from '@petstore/client';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, recordingFetch } from './client-fixtures.ts';

/** `client.withResponse`: each call's result with the status, headers, request id and rate limits of its answer. */

describe('client: results with their response metadata', () => {
  const app = appForSuite();
  let recorder: ReturnType<typeof recordingFetch>;
  let client: PetstoreClient;

  before(async () => {
    // A plan of its own, so that every figure is known: the app's clock stands at 12:00:00 UTC.
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 50, perDay: 400 });
    recorder = recordingFetch();
    client = clientOf(app, key, { fetch: recorder.fetch });
  });

  it('gives a creation with its status, headers, request id and rate-limit state', async () => {
    const created = await client.withResponse.pets.create(
      { name: 'Rex', categoryId: 9007199254740993n, status: 'available' },
      { requestId: 'create-rex' },
    );
    assert.equal(created.status, 201);
    assert.equal(created.requestId, 'create-rex');
    assert.equal(created.headers.get('location'), `/v1/pets/${created.data.id}`);
    assert.equal(created.data.categoryId, 9007199254740993n);
    const windows = created.rateLimit?.windows.map((window) => [window.name, window.remaining]);
    assert.deepEqual(
      [created.rateLimit?.remaining, windows],
      [
        49,
        [
          ['minute', 49],
          ['day', 399],
        ],
      ],
    );
    assert.deepEqual(client.rateLimit, created.rateLimit, 'the state client.rateLimit keeps, read by the same parser');
  });

  it('gives pages, listed pets and usage with the answers that carried them; plain calls give the data', async () => {
    for (let i = 0; i < 2; i += 1) await client.pets.create({ name: `more-${i}`, categoryId: i });
    const page = await client.withResponse.pets.listPage({ limit: 2 });
    assert.deepEqual(page.data, await client.pets.listPage({ limit: 2 }));
    assert.deepEqual([page.status, page.requestId, page.rateLimit?.remaining], [200, recorder.requestIds.at(-2), 46]);

    const before = recorder.requestIds.length;
    const listed: Array<PetstoreResponse<Pet>> = [];
    for await (const pet of client.withResponse.pets.list({ limit: 2 })) listed.push(pet);
    const pageIds = recorder.requestIds.slice(before);
    assert.deepEqual(
      listed.map((pet) => pet.requestId),
      [pageIds[0], pageIds[0], pageIds[1]],
      'each pet with the answer of its page',
    );
    const plain: Pet[] = [];
    for await (const pet of client.pets.list({ limit: 2 })) plain.push(pet);
    assert.deepEqual(
      listed.map((pet) => pet.data),
      plain,
    );

    const usage = await client.withResponse.usage({ requestId: 'usage-read' });
    assert.deepEqual([usage.status, usage.requestId, usage.data.windows.minute.limit], [200, 'usage-read', 50]);
    const history = await client.withResponse.usage.history({ granularity: 'day' });
    assert.deepEqual([history.status, history.data.granularity], [200, 'day']);
    assert.equal(history.requestId, recorder.requestIds.at(-1));
  });
});
