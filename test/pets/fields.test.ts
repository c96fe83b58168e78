import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { before, it } from 'node:test';
import {
  NEW_PET_FIELD_LIST,
  PET_FIELD_LIST,
  type NewPetFieldName,
  type NewPetRecord,
  type PetField,
  type PetFieldKind,
  type PetFieldKinds,
  type PetRecord,
} from '../../src/domain/pet.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { request, type HttpAnswer } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * Values of every field a creator supplies. A field added to the Pet (src/domain/pet.ts) fails to
 * compile here until it has samples; from then on it is created, read, listed and replayed below.
 */
const SAMPLES: { readonly [N in NewPetFieldName]: ReadonlyArray<NewPetRecord[N]> } = {
  name: ['Zoë "the" \\ </script> 🐕 “quoted” \u2028', "O'Malley", 'ü'.repeat(200), 'Rex'],
  categoryId: [2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 0n],
  status: ['available', 'pending', 'sold', null],
};

/** As many pets as the longest list of samples; the i-th takes each field's i-th sample, cycling. */
const NEW_PETS: readonly NewPetRecord[] = Array.from(
  { length: Math.max(...NEW_PET_FIELD_LIST.map((field) => SAMPLES[field.name].length)) },
  (_, index) =>
    Object.fromEntries(
      NEW_PET_FIELD_LIST.map((field) => {
        const values: readonly unknown[] = SAMPLES[field.name];
        return [field.name, values[index % values.length]];
      }),
    ) as NewPetRecord,
);

/** Each kind of field on the wire, written here apart from the service's: JSON text, or undefined when left out. */
const WIRE: { readonly [K in PetFieldKind]: (value: PetFieldKinds[K]) => string | undefined } = {
  'generated-id': (value) => String(value),
  text: (value) => JSON.stringify(value),
  int64: (value) => value.toString(),
  'nullable-enum': (value) => (value === null ? undefined : JSON.stringify(value)),
};

/** Each kind of field read back from JSON parsed with `exactParse`, checking its type. */
const READ: { readonly [K in PetFieldKind]: (value: unknown) => PetFieldKinds[K] } = {
  'generated-id': (value) => {
    assert.ok(typeof value === 'number' && Number.isSafeInteger(value) && value > 0, `an id: ${String(value)}`);
    return value;
  },
  text: (value) => {
    assert.equal(typeof value, 'string');
    return value as string;
  },
  int64: (value) => {
    assert.equal(typeof value, 'bigint', 'an int64, read from its digits');
    return value as bigint;
  },
  'nullable-enum': (value) => {
    assert.notEqual(value, null, 'null is left out, never written');
    assert.ok(value === undefined || typeof value === 'string');
    return value ?? null;
  },
};

type Wire = (value: PetFieldKinds[PetFieldKind]) => string | undefined;
type Read = (value: unknown) => PetFieldKinds[PetFieldKind];

/** The exact JSON of the fields, in table order. */
function wireJson(
  pet: Partial<Record<PetField['name'], PetFieldKinds[PetFieldKind]>>,
  fields: readonly PetField[],
): string {
  const members: string[] = [];
  for (const field of fields) {
    const text = (WIRE[field.kind] as Wire)(pet[field.name] as PetFieldKinds[PetFieldKind]);
    if (text !== undefined) members.push(`${JSON.stringify(field.name)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/** JSON.parse keeping every int64 field exact, as a bigint from its source digits. */
function exactParse(text: string): unknown {
  const int64Names = new Set<string>(
    PET_FIELD_LIST.filter((field) => field.kind === 'int64').map((field) => field.name),
  );
  const reviver: Reviver = (key, value, context) =>
    int64Names.has(key) && context?.source !== undefined ? BigInt(context.source) : value;
  return JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
}

/** A parsed Pet as a record: exactly the table's fields, each of its kind. */
function recordOf(parsed: unknown): PetRecord {
  assert.ok(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed));
  const names = new Set<string>(PET_FIELD_LIST.map((field) => field.name));
  for (const key of Object.keys(parsed)) assert.ok(names.has(key), `unknown field ${key}`);
  const values = parsed as Record<string, unknown>;
  return Object.fromEntries(
    PET_FIELD_LIST.map((field) => [field.name, (READ[field.kind] as Read)(values[field.name])]),
  ) as PetRecord;
}

function createdPet(answer: HttpAnswer, pet: NewPetRecord): PetRecord {
  assert.equal(answer.status, 201, answer.text);
  const created = recordOf(exactParse(answer.text));
  const expected: PetRecord = { ...pet, id: created.id };
  assert.deepEqual(created, expected);
  assert.equal(answer.text, wireJson(expected, PET_FIELD_LIST), 'field order, left-out nulls, digits');
  return expected;
}

function sentBody(pet: NewPetRecord): string {
  return wireJson(pet, NEW_PET_FIELD_LIST);
}

describeEachBackend('every field of a Pet round-trips', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'business' })));

  async function assertServed(pets: readonly PetRecord[]): Promise<void> {
    for (const pet of pets) {
      const answer = await request(app, `/v1/pets/${pet.id}`, { key });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.text, wireJson(pet, PET_FIELD_LIST));
      assert.deepEqual(recordOf(exactParse(answer.text)), pet);
    }
    // Every pet in the list, following next links, where each appears exactly as GET wrote it.
    const expected = new Map(pets.map((pet) => [pet.id, pet]));
    const listed = new Set<number>();
    let path: string | undefined = '/v1/pets?limit=100';
    while (path !== undefined && listed.size < expected.size) {
      const page = await request(app, path, { key });
      assert.equal(page.status, 200, page.text);
      const parsed = exactParse(page.text);
      assert.ok(Array.isArray(parsed));
      for (const item of parsed) {
        const pet = recordOf(item);
        const want = expected.get(pet.id);
        if (want === undefined) continue;
        assert.deepEqual(pet, want);
        assert.ok(page.text.includes(wireJson(want, PET_FIELD_LIST)), `${pet.id} as GET writes it`);
        listed.add(pet.id);
      }
      const link = page.headers.get('link');
      path = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    }
    assert.equal(listed.size, expected.size, 'every pet is listed');
  }

  it('creates the sample pets at once (grouped in one commit), then gets and lists them', async () => {
    const answers = await Promise.all(
      NEW_PETS.map((pet) => request(app, '/v1/pets', { method: 'POST', key, json: sentBody(pet) })),
    );
    const created = answers.map((answer, index) => createdPet(answer, NEW_PETS[index] as NewPetRecord));
    await assertServed(created);
  });

  it('creates each sample pet with an Idempotency-Key and replays it exactly', async () => {
    const created: PetRecord[] = [];
    for (const pet of NEW_PETS) {
      const headers = { 'idempotency-key': randomUUID() };
      const first = await request(app, '/v1/pets', { method: 'POST', key, json: sentBody(pet), headers });
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const record = createdPet(first, pet);
      const replay = await request(app, '/v1/pets', { method: 'POST', key, json: sentBody(pet), headers });
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(createdPet(replay, pet), record);
      assert.equal(replay.text, first.text);
      created.push(record);
    }
    await assertServed(created);
  });

  it('replays a record stored with the fingerprint of [name, categoryId digits, status]', async () => {
    // Records stored by earlier versions hold this fingerprint: a request that computes another one
    // is refused 422 for as long as those records are kept (24 hours).
    const { key: ownKey, account } = await app.newKey({ plan: 'business' });
    const accountId = (await app.services.store.accounts.findByName(account))?.id;
    assert.ok(accountId !== undefined);
    const idempotencyKey = randomUUID();
    const body = '{"id":424242,"name":"Stored","categoryId":9007199254740993}';
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(['Stored', '9007199254740993', null]))
      .digest('base64url');
    await app.execute(
      `INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, status_code, body)
       VALUES (${accountId}, '${idempotencyKey}', '${fingerprint}', ${app.clock.now()}, 201, '${body}')`,
    );
    const answer = await request(app, '/v1/pets', {
      method: 'POST',
      key: ownKey,
      json: '{"name":"Stored","categoryId":9007199254740993}',
      headers: { 'idempotency-key': idempotencyKey },
    });
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.headers.get('idempotent-replayed'), 'true');
    assert.equal(answer.text, body);
  });
});
