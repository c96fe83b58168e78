import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { PetstoreClient } from '@petstore/client';
import { int64Replacer, int64Reviver, type NewPet, type Pet, type PetStatus } from '@petstore/client';
import { request } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { parseJson, parseJsonByPrePass } from '../../client/src/int64-json.ts';
import { clientOf, recordingFetch } from './client-fixtures.ts';

/** The client's pets calls against the real app: pages walked whole, and categoryId kept exactly. */

const STATUSES: ReadonlyArray<PetStatus | undefined> = ['available', 'pending', 'sold', undefined];

async function createMany(client: PetstoreClient, count: number, label: string): Promise<Pet[]> {
  const created: Pet[] = [];
  for (let i = 0; i < count; i += 1) {
    const status = STATUSES[i % STATUSES.length];
    const pet: NewPet =
      status === undefined
        ? { name: `${label}-${i}`, categoryId: i }
        : { name: `${label}-${i}`, categoryId: i, status };
    created.push(await client.pets.create(pet));
  }
  return created;
}

async function collect(pets: AsyncIterable<Pet>): Promise<Pet[]> {
  const all: Pet[] = [];
  for await (const pet of pets) all.push(pet);
  return all;
}

describe('client: listing every page', () => {
  const app = appForSuite();
  let created: Pet[];
  let recorder: ReturnType<typeof recordingFetch>;
  let client: PetstoreClient;

  before(async () => {
    const { key } = await app.newKey({ plan: 'pro' });
    recorder = recordingFetch();
    client = clientOf(app, key, { fetch: recorder.fetch });
    created = await createMany(client, 9, 'walk');
  });

  it('walks every pet in id order, page after page, without a filter', async () => {
    const before = recorder.requests.length;
    const walked = await collect(client.pets.list({ limit: 2 }));
    assert.deepEqual(walked, created);
    const pages = recorder.requests.slice(before);
    assert.equal(pages.length, 5, 'nine pets in pages of two: five pages');
    assert.ok(
      pages.slice(1).every((page) => new URL(page.url).searchParams.has('cursor')),
      'later pages send a cursor',
    );
  });

  it('walks every pet with a status filter, and only those', async () => {
    for (const status of ['available', 'pending', 'sold'] as const) {
      const walked = await collect(client.pets.list({ status, limit: 1 }));
      assert.deepEqual(
        walked,
        created.filter((pet) => pet.status === status),
        `status ${status}`,
      );
    }
  });

  it('listPage gives one page and the cursor of the next, none on the last page', async () => {
    const first = await client.pets.listPage({ limit: 5 });
    assert.deepEqual(first.pets, created.slice(0, 5));
    assert.equal(typeof first.nextCursor, 'string');
    const second = await client.pets.listPage({ limit: 5, cursor: first.nextCursor });
    assert.deepEqual(second.pets, created.slice(5));
    assert.equal(second.nextCursor, undefined);
  });

  it('records the rate-limit state of the last answer, with both windows', async () => {
    // A plan of its own, so that every figure is known: the app's clock stands at 12:00:00 UTC.
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 50, perDay: 400 });
    const own = clientOf(app, key);
    assert.equal(own.rateLimit, undefined, 'no state before the first answer');
    await own.pets.listPage({ limit: 1 });
    await own.pets.listPage({ limit: 1 });
    assert.deepEqual(own.rateLimit, {
      limit: 50,
      remaining: 48,
      reset: Date.parse('2026-06-01T12:01:00Z') / 1000,
      windows: [
        { name: 'minute', limit: 50, remaining: 48, resetSeconds: 60 },
        { name: 'day', limit: 400, remaining: 398, resetSeconds: 12 * 3600 },
      ],
    });
  });
});

describe('client: int64 id and categoryId', () => {
  const app = appForSuite();
  let client: PetstoreClient;
  let key: string;

  before(async () => {
    ({ key } = await app.newKey());
    client = clientOf(app, key);
  });

  it('sends a bigint beyond 2^53 with its exact digits and reads it back as the same bigint', async () => {
    for (const categoryId of [9007199254740993n, 9223372036854775807n, -9223372036854775808n]) {
      const pet = await client.pets.create({ name: `big ${categoryId}`, categoryId });
      assert.equal(pet.categoryId, categoryId);
      const raw = await request(app, `/v1/pets?limit=100`, { key });
      assert.ok(raw.text.includes(`"categoryId":${categoryId}`), `the service stored ${categoryId} digit for digit`);
      const listed = await collect(client.pets.list({ limit: 100 }));
      assert.equal(listed.find((other) => other.id === pet.id)?.categoryId, categoryId);
    }
  });

  it('writes pets with int64Replacer (exact digits in a string) and reads them back with int64Reviver', async () => {
    const pets = [
      await client.pets.create({ name: 'big', categoryId: 9223372036854775807n }),
      await client.pets.create({ name: 'small', categoryId: 42 }),
    ];
    assert.throws(() => JSON.stringify(pets), TypeError, 'JSON.stringify alone cannot write a bigint');
    const text = JSON.stringify(pets, int64Replacer);
    assert.ok(text.includes('"categoryId":"9223372036854775807"'), text);
    assert.ok(text.includes('"categoryId":42'), text);
    assert.deepEqual(JSON.parse(text, int64Reviver), pets);
    assert.deepEqual(JSON.parse('{"categoryId":"12"}', int64Reviver), { categoryId: 12 });
    assert.deepEqual(JSON.parse('{"name":"9007199254740993"}', int64Reviver), { name: '9007199254740993' });
  });

  it('reads a safe categoryId as a number', async () => {
    const pet = await client.pets.create({ name: 'small', categoryId: 7n });
    assert.equal(pet.categoryId, 7);
    assert.equal(typeof pet.categoryId, 'number');
  });

  it('reads id exactly too: a number while safe, a bigint beyond 2^53, as int64 allows', async () => {
    const pet = await client.pets.create({ name: 'ordinary id', categoryId: 1 });
    assert.equal(typeof pet.id, 'number', 'the service assigns ids in sequence, far below 2^53');
    const text = '[{"id":9007199254740993,"name":"far","categoryId":9223372036854775807}]';
    const far = [{ id: 9007199254740993n, name: 'far', categoryId: 9223372036854775807n }];
    assert.deepEqual(parseJson(text), far);
    assert.deepEqual(parseJsonByPrePass(text), far);
    const written = JSON.stringify(far, int64Replacer);
    assert.equal(written, '[{"id":"9007199254740993","name":"far","categoryId":"9223372036854775807"}]');
    assert.deepEqual(JSON.parse(written, int64Reviver), far);
  });

  it('sends an unsafe number with the digits of its exact value', async () => {
    const pet = await client.pets.create({ name: 'two to the 53', categoryId: 2 ** 53 });
    assert.equal(pet.categoryId, 9007199254740992n);
  });

  it('parses alike without source text in the reviver (older engines); strings and fractions untouched', async () => {
    await client.pets.create({ name: '12345678901234567890 in a name', categoryId: -9007199254740993n });
    const raw = await request(app, '/v1/pets?limit=100', { key });
    const byPrePass = parseJsonByPrePass(raw.text);
    assert.deepEqual(byPrePass, parseJson(raw.text));
    assert.ok(
      JSON.stringify(byPrePass, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)).includes(
        '-9007199254740993n',
      ),
    );
    const tricky = '{"a":1.12345678901234567,"b":"99999999999999999","c":1e12345678901234567}';
    assert.deepEqual(parseJsonByPrePass(tricky), JSON.parse(tricky));
  });
});
