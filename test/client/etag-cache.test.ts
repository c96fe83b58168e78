import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PetstoreClient, type Pet, type PetstoreClientOptions } from '@petstore/client';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf, startFlakyFront, type FlakyFront, type SeenRequest } from './client-fixtures.ts';

/**
 * `etagCache`: the client keeps the answers of pets and full pages by their strong ETags and asks again with
 * If-None-Match; the app answers 304 and the client gives back the kept body. A front that forwards everything
 * shows what reached the app and what the app answered.
 */

/**
 * The requests of pets the front passed on. Not the read of the usage that the first deprecated answer in the
 * process makes, for its warning.
 */
function petsRequests(front: FlakyFront): SeenRequest[] {
  return front.seen.filter((request) => request.path.startsWith('/v1/pets'));
}

/** What the app saw of each request of pets and answered: [path, If-None-Match, status]. */
function exchanges(front: FlakyFront): unknown[] {
  return petsRequests(front).map((request) => [request.path, request.ifNoneMatch, request.upstreamStatus]);
}

describe('client: ETags kept, If-None-Match sent', () => {
  const app = appForSuite();
  let key: string;
  let pets: Pet[];
  const fronts: FlakyFront[] = [];

  before(async () => {
    ({ key } = await app.newKey({ plan: 'pro' }));
    const setup = clientOf(app, key);
    pets = [];
    for (let i = 0; i < 5; i += 1) pets.push(await setup.pets.create({ name: `kept-${i}`, categoryId: i }));
  });
  after(async () => {
    for (const front of fronts) await front.close();
  });

  async function clientBehindFront(
    options: Partial<PetstoreClientOptions> = {},
  ): Promise<{ client: PetstoreClient; front: FlakyFront }> {
    const front = await startFlakyFront(app.url, []);
    fronts.push(front);
    return { client: new PetstoreClient({ baseUrl: front.baseUrl, apiKey: key, ...options }), front };
  }

  it('asks for a full page again with its ETag: the app answers 304, the client gives the kept page', async () => {
    const { client, front } = await clientBehindFront({ etagCache: true });
    const first = await client.withResponse.pets.listPage({ limit: 2 });
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[^"]+"$/, 'a full page carries a strong ETag');
    const second = await client.withResponse.pets.listPage({ limit: 2, requestId: 'second-look' });
    assert.deepEqual(exchanges(front), [
      ['/v1/pets?limit=2', undefined, 200],
      ['/v1/pets?limit=2', etag, 304],
    ]);
    assert.equal(second.status, 304);
    assert.deepEqual(second.data, first.data);
    assert.deepEqual(second.data.pets, pets.slice(0, 2));
    assert.equal(second.requestId, 'second-look', "the 304's own request id");
    assert.equal(second.rateLimit?.remaining, (first.rateLimit?.remaining ?? 0) - 1, 'a 304 counts as a request');
    assert.deepEqual(await client.pets.listPage({ limit: 2 }), first.data, 'the plain call gives the kept page too');
  });

  it('keeps the pages of list() that have an ETag, not the last, partial one', async () => {
    const { client, front } = await clientBehindFront({ etagCache: { maxEntries: 10 } });
    const walk = async (): Promise<Pet[]> => {
      const all: Pet[] = [];
      for await (const pet of client.pets.list({ limit: 2 })) all.push(pet);
      return all;
    };
    assert.deepEqual(await walk(), pets);
    assert.deepEqual(await walk(), pets);
    const statuses = petsRequests(front).map((request) => [request.ifNoneMatch !== undefined, request.upstreamStatus]);
    assert.deepEqual(statuses, [
      [false, 200],
      [false, 200],
      [false, 200],
      [true, 304],
      [true, 304],
      [false, 200],
    ]);
  });

  it('asks for a pet again with its ETag; each 304 gives a copy of its own', async () => {
    const { client, front } = await clientBehindFront({ etagCache: true });
    const pet = pets[0] as Pet;
    const first = await client.pets.get(pet.id);
    first.name = 'changed by the caller';
    const second = await client.withResponse.pets.get(pet.id);
    assert.deepEqual([second.status, second.data], [304, pet]);
    assert.deepEqual(exchanges(front), [
      [`/v1/pets/${pet.id}`, undefined, 200],
      [`/v1/pets/${pet.id}`, second.headers.get('etag'), 304],
    ]);
    assert.equal(second.headers.get('deprecation')?.startsWith('@'), true, 'the 304 tells the deprecation too');
  });

  it('keeps at most maxEntries, the least recently used going first', async () => {
    const { client, front } = await clientBehindFront({ etagCache: { maxEntries: 2 } });
    const [a, b, c] = pets as [Pet, Pet, Pet];
    for (const pet of [a, b, a, c, a, b]) await client.pets.get(pet.id);
    assert.deepEqual(
      petsRequests(front).map((request) => [request.path, request.upstreamStatus]),
      [
        [`/v1/pets/${a.id}`, 200],
        [`/v1/pets/${b.id}`, 200],
        [`/v1/pets/${a.id}`, 304],
        [`/v1/pets/${c.id}`, 200],
        [`/v1/pets/${a.id}`, 304],
        [`/v1/pets/${b.id}`, 200],
      ],
    );
  });

  it('sends no If-None-Match unless etagCache is on', async () => {
    const { client, front } = await clientBehindFront();
    await client.pets.listPage({ limit: 2 });
    await client.pets.listPage({ limit: 2 });
    assert.deepEqual(exchanges(front), [
      ['/v1/pets?limit=2', undefined, 200],
      ['/v1/pets?limit=2', undefined, 200],
    ]);
    assert.throws(() => new PetstoreClient({ baseUrl: front.baseUrl, apiKey: key, etagCache: { maxEntries: 0 } }), {
      name: 'TypeError',
      message: 'etagCache.maxEntries must be an integer of at least 1 (got 0)',
    });
  });
});
