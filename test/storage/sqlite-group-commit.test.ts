import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, StatementSync, type SQLInputValue } from 'node:sqlite';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { PET_STATUSES, type NewPetRecord, type PetRecord } from '../../src/domain/pet.ts';
import { openSqliteStore } from '../../src/storage/sqlite-dialect.ts';
import type { IdempotentCreate, IdempotentOutcome } from '../../src/domain/pet-store.ts';
import type { Store } from '../../src/domain/store.ts';

/**
 * SQLite's group commit writes a batch of creations with multi-row INSERTs of pets and of
 * completed idempotency records, one per power of two in the batch's count (50 rows: 32, 16 and
 * 2). Each creation must still get its own row's id, and replay its own response. The statements
 * are counted on the real connections, by a spy on node:sqlite's statements and transactions that
 * passes every call through.
 */
const NOW = Date.UTC(2026, 5, 1, 12);
/** Creations the group commit puts in one transaction at most (MAX_BATCH in sqlite-dialect.ts). */
const MAX_BATCH = 128;

interface Executed {
  /** SQL of every statement run, in order. */
  readonly statements: string[];
  commits: number;
}

/** Records what node:sqlite runs, in this process, until the returned function is called. */
function watchStatements(): { readonly executed: Executed; stop(): void } {
  const executed: Executed = { statements: [], commits: 0 };
  const all = Object.getOwnPropertyDescriptor(StatementSync.prototype, 'all');
  const exec = Object.getOwnPropertyDescriptor(DatabaseSync.prototype, 'exec');
  type All = (this: StatementSync, ...values: SQLInputValue[]) => ReturnType<StatementSync['all']>;
  const originalAll: All = StatementSync.prototype.all;
  const originalExec = DatabaseSync.prototype.exec;
  Object.defineProperty(StatementSync.prototype, 'all', {
    ...all,
    value: function (this: StatementSync, ...parameters: SQLInputValue[]) {
      executed.statements.push(this.sourceSQL);
      return originalAll.apply(this, parameters);
    },
  });
  Object.defineProperty(DatabaseSync.prototype, 'exec', {
    ...exec,
    value: function (this: DatabaseSync, text: string) {
      if (/^\s*commit\b/i.test(text)) executed.commits += 1;
      originalExec.call(this, text);
    },
  });
  return {
    executed,
    stop() {
      if (all) Object.defineProperty(StatementSync.prototype, 'all', all);
      if (exec) Object.defineProperty(DatabaseSync.prototype, 'exec', exec);
    },
  };
}

const petInserts = (executed: Executed): string[] =>
  executed.statements.filter((text) => /^insert into "pets"/i.test(text));
const recordInserts = (executed: Executed): string[] =>
  executed.statements.filter((text) => /^insert into "idempotency_keys"/i.test(text));

/** The row count of a multi-row INSERT: its VALUES tuples. */
const tuples = (text: string): number => text.match(/\(\?(, \?)*\)/g)?.length ?? 0;

/** The row counts of the INSERTs that write `rows` rows: its binary digits, largest first (50: 32, 16, 2). */
const runsOf = (rows: number): number[] =>
  [...rows.toString(2)].flatMap((digit, index, digits) => (digit === '1' ? [2 ** (digits.length - 1 - index)] : []));

const respond = (pet: PetRecord): { statusCode: number; body: string } => ({
  statusCode: 201,
  body: JSON.stringify({ id: pet.id, name: pet.name, categoryId: pet.categoryId.toString(), status: pet.status }),
});

function keyed(accountId: number, key: string, fingerprint: string): IdempotentCreate {
  return { accountId, key, fingerprint, respond };
}

/** A creation of the mix: every third without a key. */
interface Creation {
  readonly pet: NewPetRecord;
  readonly request: IdempotentCreate | undefined;
}

function mix(count: number, tag: string): Creation[] {
  return Array.from({ length: count }, (_unused, i) => ({
    pet: {
      name: `${tag} ${i}`,
      categoryId: BigInt(i) * 2n ** 40n + 1n,
      status: i % 4 === 0 ? null : (PET_STATUSES[i % PET_STATUSES.length] ?? null),
    },
    request: i % 3 === 0 ? undefined : keyed(1 + (i % 5), `${tag}-${i}`, `fp-${tag}-${i}`),
  }));
}

/** Starts every creation in the same event-loop turn, so they share batches. */
function createAll(store: Store, creations: readonly Creation[], now = NOW): Promise<IdempotentOutcome[]> {
  return Promise.all(
    creations.map(async ({ pet, request }): Promise<IdempotentOutcome> => {
      if (!request) return { state: 'created', pet: await store.pets.create(pet, now) };
      return store.pets.createIdempotent(pet, now, request);
    }),
  );
}

function createdPets(outcomes: readonly IdempotentOutcome[]): PetRecord[] {
  return outcomes.map((outcome) => {
    assert.equal(outcome.state, 'created');
    return (outcome as Extract<IdempotentOutcome, { state: 'created' }>).pet;
  });
}

describe('SQLite group commit: multi-row INSERTs per batch', () => {
  let directory: string;
  let store: Store;
  let watch: ReturnType<typeof watchStatements> | undefined;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-group-commit-'));
    store = openSqliteStore(join(directory, 'petstore.db'), { timeoutMs: 5000 });
    await store.migrate();
  });

  after(async () => {
    await store?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  beforeEach(() => {
    watch = watchStatements();
  });

  afterEach(() => {
    watch?.stop();
    watch = undefined;
  });

  const executed = (): Executed => {
    assert.ok(watch);
    return watch.executed;
  };

  it('a batch of mixed creations gets distinct ids holding their own bodies; each key replays its own', async () => {
    const creations = mix(60, 'mixed');
    const pets = createdPets(await createAll(store, creations));

    assert.equal(new Set(pets.map((pet) => pet.id)).size, creations.length, 'ids are distinct');
    for (const [index, pet] of pets.entries()) {
      assert.deepEqual(pet, { id: pet.id, ...creations[index]?.pet }, 'the outcome is its own creation');
      assert.deepEqual(await store.pets.get(pet.id), pet, 'its id holds its own row');
    }
    // Ids ascend in the order the creations were queued, as one at a time would have drawn them.
    assert.deepEqual(
      pets.map((pet) => pet.id),
      [...pets.map((pet) => pet.id)].sort((a, b) => a - b),
    );

    // Sent again, in one batch as well, each keyed creation replays its own response and creates nothing.
    const before = await store.pets.list({ afterId: 0, limit: 1000, status: undefined });
    const again = await createAll(
      store,
      creations.filter((creation) => creation.request),
      NOW + 1,
    );
    const keyedPets = pets.filter((_pet, index) => creations[index]?.request);
    assert.deepEqual(
      again,
      keyedPets.map((pet, index) => ({
        state: 'completed',
        fingerprint: creations.filter((creation) => creation.request)[index]?.request?.fingerprint,
        response: respond(pet),
      })),
    );
    assert.equal((await store.pets.list({ afterId: 0, limit: 1000, status: undefined })).length, before.length);
  });

  it('writes a batch with an INSERT of its pets and one of its records per power of two, in one commit', async () => {
    const creations = mix(50, 'counted');
    await createAll(store, creations);

    const pets = petInserts(executed());
    const records = recordInserts(executed());
    assert.equal(executed().commits, 1, 'one commit');
    assert.deepEqual(pets.map(tuples), runsOf(50), 'every creation, in runs of 32, 16 and 2');
    for (const text of pets) assert.match(text, /returning "id"$/i);
    const keyedCount = creations.filter((creation) => creation.request).length;
    assert.deepEqual(records.map(tuples), runsOf(keyedCount), 'every record, in runs of powers of two');
  });

  it('keeps one SQL text per power of two, whatever the counts of the batches', async () => {
    for (const count of [3, 5, 6, 7, 9, 12]) await createAll(store, mix(count, `sizes-${count}`));
    const counts = new Set(petInserts(executed()).map(tuples));
    assert.deepEqual(
      [...counts].sort((a, b) => a - b),
      [1, 2, 4, 8],
    );
  });

  it('a key taken earlier in the batch replays that creation; a stored key replays its record', async () => {
    const first = keyed(7, 'shared', 'fp-first');
    const other = keyed(7, 'shared', 'fp-other');
    const [created, sameBody, otherBody] = await Promise.all([
      store.pets.createIdempotent({ name: 'first', categoryId: 1n, status: null }, NOW, first),
      store.pets.createIdempotent({ name: 'first', categoryId: 1n, status: null }, NOW, first),
      store.pets.createIdempotent({ name: 'other', categoryId: 2n, status: null }, NOW, other),
    ]);
    assert.equal(created?.state, 'created');
    const pet = (created as Extract<IdempotentOutcome, { state: 'created' }>).pet;
    const replay = { state: 'completed', fingerprint: 'fp-first', response: respond(pet) };
    assert.deepEqual(sameBody, replay);
    assert.deepEqual(otherBody, replay, 'another body under the key reports the first fingerprint');
    assert.equal(tuples(petInserts(executed())[0] ?? ''), 1, 'one pet inserted');
    assert.equal(tuples(recordInserts(executed())[0] ?? ''), 1, 'one record stored');

    // In a later batch, the stored record replays, beside creations that still insert.
    const [later, fresh] = await Promise.all([
      store.pets.createIdempotent({ name: 'first', categoryId: 1n, status: null }, NOW + 5, first),
      store.pets.createIdempotent({ name: 'fresh', categoryId: 3n, status: 'sold' }, NOW + 5, keyed(7, 'fresh', 'fp')),
    ]);
    assert.deepEqual(later, replay);
    assert.equal(fresh?.state, 'created');
  });

  it(`over ${MAX_BATCH} creations at once go out in batches of ${MAX_BATCH} at most, each with its id`, async () => {
    const creations = mix(300, 'many');
    const pets = createdPets(await createAll(store, creations));
    assert.equal(new Set(pets.map((pet) => pet.id)).size, creations.length);
    for (const [index, pet] of pets.entries()) {
      assert.deepEqual(await store.pets.get(pet.id), { id: pet.id, ...creations[index]?.pet });
    }
    const inserts = petInserts(executed());
    assert.ok(executed().commits >= Math.ceil(creations.length / MAX_BATCH));
    assert.ok(inserts.every((text) => tuples(text) <= MAX_BATCH));
    assert.equal(
      inserts.reduce((rows, text) => rows + tuples(text), 0),
      creations.length,
    );
  });

  it('a batch that fails rejects every creation in it and leaves none of its rows', async () => {
    const before = await store.pets.list({ afterId: 0, limit: 10_000, status: undefined });
    const failing: IdempotentCreate = {
      ...keyed(9, 'failing', 'fp'),
      respond: () => {
        throw new Error('no response');
      },
    };
    const results = await Promise.allSettled([
      store.pets.create({ name: 'plain', categoryId: 1n, status: null }, NOW),
      store.pets.createIdempotent({ name: 'keyed', categoryId: 1n, status: null }, NOW, keyed(9, 'kept', 'fp')),
      store.pets.createIdempotent({ name: 'failing', categoryId: 1n, status: null }, NOW, failing),
    ]);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.match(String(result.reason), /no response/);
    }
    assert.deepEqual(await store.pets.list({ afterId: 0, limit: 10_000, status: undefined }), before);

    // Nothing of the batch was kept: its key creates when sent again.
    const outcome = await store.pets.createIdempotent(
      { name: 'keyed', categoryId: 1n, status: null },
      NOW,
      keyed(9, 'kept', 'fp'),
    );
    assert.equal(outcome.state, 'created');
  });
});
