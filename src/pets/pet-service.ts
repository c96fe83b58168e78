import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { GoneError, IdempotencyConflictError, NotFoundError, StorageUnavailableError } from '../errors.ts';
import {
  NEW_PET_FIELD_LIST,
  PET_FIELD_LIST,
  type NewPetRecord,
  type PetFieldKind,
  type PetFieldKinds,
  type PetRecord,
  type PetStatus,
  type SuppliedPetFieldKind,
} from '../domain/pet.ts';
import type { Deprecation } from '../domain/deprecation.ts';
import type { IdempotentResponse } from '../domain/pet-store.ts';
import type { Store } from '../domain/store.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { LRUCache } from 'lru-cache';
import { stringBytes } from '../memory-size.ts';
// Only for the size of what the HTTP layer keeps with each cached page, so the bound holds.
import { keptBytesBound } from '../net/representation.ts';
import { petsToJson, petToJson } from './pet-json.ts';

export interface PetPage {
  /** The page as a JSON array (Pets): all a cached page needs, so the records are not kept with it. */
  readonly json: string;
  /** Present when more pets may follow. */
  readonly nextCursor: string | undefined;
  /** The page was full when read, so it never changes: the service keeps it, and the routes keep its bytes. */
  readonly cached: boolean;
}

export interface IdempotencyRequest {
  readonly accountId: number;
  readonly key: string;
}

export interface CreateOutcome {
  readonly statusCode: number;
  readonly body: string;
  readonly petId: number;
  /** True when this answers a retry from the stored first response. */
  readonly replayed: boolean;
}

const UNCONFIRMED_CREATION = 'storage did not confirm the creation, so the pet may have been created';
const RETRY_WITH_A_KEY =
  'a retry may add it twice. Send an Idempotency-Key with every creation: a retry with the same key is safe';
const RETRY_WITH_THE_SAME_KEY =
  'retrying with the same Idempotency-Key and body is safe: it answers with that pet, or creates it once';

/** Keys are kept at least this long (decisions: at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Pets never change once created (v1 has no update or delete; docs/architecture.md says what one
 * would have to do to these caches) and ids are assigned, and become visible, in increasing order
 * on every backend. So a pet, and a page that was full when read (more pets followed it), are the
 * same forever, on every instance: both are cached. The last, partial page is always read from
 * storage, so new pets appear at once.
 */
export interface PetCacheOptions {
  /**
   * Most bytes the cached pets may take (the records); default 6 MiB: some 23,000 pets of short names,
   * so a store of 10,000 fits with room for names of a hundred characters.
   */
  readonly petBytes?: number;
  /**
   * Most bytes the cached full pages may take (JSON text, its bytes and compressed forms); default 16 MiB:
   * every full page of 10,000 pets, at limits 20 and 100, unfiltered and by each status, takes about 12.
   */
  readonly pageBytes?: number;
}

const CACHED_PET_BYTES = 6 * 1024 * 1024;
const CACHED_PAGE_BYTES = 16 * 1024 * 1024;

export class PetService {
  private readonly store: Store;
  private readonly clock: Clock;
  readonly deprecation: Deprecation;
  // Bounded in bytes, not entries: a name may be hundreds of multi-byte characters. Sizes are
  // computed once, on insertion, so a hit costs what it did.
  private readonly pets: LRUCache<number, PetRecord>;
  private readonly fullPages: LRUCache<string, PetPage>;

  constructor(store: Store, clock: Clock, deprecation: Deprecation, cache: PetCacheOptions = {}) {
    this.store = store;
    this.clock = clock;
    this.deprecation = deprecation;
    this.pets = new LRUCache({ maxSize: cache.petBytes ?? CACHED_PET_BYTES, sizeCalculation: cachedPetBytes });
    this.fullPages = new LRUCache({ maxSize: cache.pageBytes ?? CACHED_PAGE_BYTES, sizeCalculation: cachedPageBytes });
  }

  /** Bytes the caches account for now, for tests and the soak of the memory bound. */
  cacheBytes(): { readonly pets: number; readonly pages: number } {
    return { pets: this.pets.calculatedSize, pages: this.fullPages.calculatedSize };
  }

  /**
   * Creates the pet, or replays the first answer to its idempotency key. When storage fails, the
   * commit may still have happened (the answer was lost, not the write): the error says so, and what
   * makes a retry safe.
   */
  async create(pet: NewPetRecord, idempotency?: IdempotencyRequest): Promise<CreateOutcome> {
    const now = this.clock.now();
    try {
      if (!idempotency) {
        const created = await this.store.pets.create(pet, now);
        return { statusCode: 201, body: petToJson(created), petId: created.id, replayed: false };
      }
      const fingerprint = fingerprintOf(pet);
      const respond = (created: PetRecord): IdempotentResponse => ({ statusCode: 201, body: petToJson(created) });
      const outcome = await this.store.pets.createIdempotent(pet, now, { ...idempotency, fingerprint, respond });
      if (outcome.state === 'created') {
        return { statusCode: 201, body: petToJson(outcome.pet), petId: outcome.pet.id, replayed: false };
      }
      if (outcome.fingerprint !== fingerprint) {
        throw new IdempotencyConflictError('this Idempotency-Key was already used with a different request body');
      }
      return replay(outcome.response);
    } catch (error) {
      throw unconfirmedIfUnavailable(error, idempotency !== undefined);
    }
  }

  /** Most reads are answered from the cache of full pages. */
  async list(query: { limit: number; status: PetStatus | undefined; cursor: string | undefined }): Promise<PetPage> {
    const afterId = query.cursor === undefined ? 0 : decodeCursor(query.cursor);
    const cacheKey = `${query.status ?? ''}:${afterId}:${query.limit}`;
    return this.fullPages.get(cacheKey) ?? this.readPage(afterId, query.limit, query.status, cacheKey);
  }

  private async readPage(
    afterId: number,
    limit: number,
    status: PetStatus | undefined,
    cacheKey: string,
  ): Promise<PetPage> {
    // One extra row tells whether another page exists, so the last page carries no next link.
    const rows = await this.store.pets.list({ afterId, limit: limit + 1, status });
    if (rows.length <= limit) return { json: petsToJson(rows), nextCursor: undefined, cached: false };
    const pets = rows.slice(0, limit);
    const nextCursor = encodeCursor((pets[pets.length - 1] as PetRecord).id);
    const page = { json: petsToJson(pets), nextCursor, cached: true };
    this.fullPages.set(cacheKey, page);
    return page;
  }

  /** The deprecated getPet: gone from the sunset instant on. */
  async get(id: bigint): Promise<PetRecord> {
    if (this.clock.now() >= this.deprecation.sunsetAt.getTime()) {
      throw new GoneError(
        `GET /v1/pets/{petId} was removed on ${this.deprecation.sunsetAt.toUTCString()}; ` +
          'use GET /v1/pets with the status filter',
      );
    }
    // Ids are assigned sequentially from 1, so one past 2^53 cannot exist.
    if (id < 1n || id > BigInt(Number.MAX_SAFE_INTEGER)) throw new NotFoundError(`no pet with id ${id}`);
    return this.pets.get(Number(id)) ?? this.read(Number(id));
  }

  private async read(id: number): Promise<PetRecord> {
    const pet = await this.store.pets.get(id);
    if (!pet) throw new NotFoundError(`no pet with id ${id}`);
    // Only found pets are cached: an unknown id may be created a moment later.
    this.pets.set(id, pet);
    return pet;
  }

  purgeIdempotencyKeys(): Promise<number> {
    return this.store.idempotency.purge(this.clock.now() - IDEMPOTENCY_RETENTION_MS);
  }
}

/**
 * The entries' fixed sizes, from what filling the caches with 10,000 pets and 500 pages of 20 added
 * to process.memoryUsage()'s heapUsed (a throwaway script, not a timed test). A pet named `Pet 1234`
 * took 250 bytes: the record, its strings and bigint, and its slot in the cache; it is counted as
 * 272. A page took 290 bytes besides its JSON text and what keptBody keeps. Text is counted by
 * stringBytes, at two bytes a character, which V8 needs only beyond Latin-1: a page of Latin-1 names
 * is counted at about 1.5 times what it takes, so that one of emoji names still fits its bound.
 */
const PET_ENTRY_BYTES = 224;
/** A page's entry besides its key, cursor, JSON text and what keptBody keeps: the page object and its slot. */
const PAGE_ENTRY_BYTES = 256;

/** The record, and what the routes keep with it (keptBody): a small pet's digest, a large one's Representation. */
function cachedPetBytes(pet: PetRecord): number {
  let bytes = PET_ENTRY_BYTES + keptBytesBound(Buffer.byteLength(petToJson(pet)));
  for (const field of BYTES_OF_FIELDS) bytes += field.bytes(pet[field.name]);
  return bytes;
}

/** The JSON text and what the routes keep with the page (its bytes, ETag and compressed forms). */
function cachedPageBytes(page: PetPage, key: string): number {
  let bytes = PAGE_ENTRY_BYTES + stringBytes(key) + stringBytes(page.json);
  bytes += keptBytesBound(Buffer.byteLength(page.json));
  bytes += page.nextCursor === undefined ? 0 : stringBytes(page.nextCursor);
  return bytes;
}

/** What each kind of field adds to a record's size: strings of their own; numbers and fixed words nothing. */
const FIELD_BYTES: { readonly [K in PetFieldKind]: (value: PetFieldKinds[K]) => number } = {
  'generated-id': () => 0,
  text: stringBytes,
  int64: () => 0,
  'nullable-enum': () => 0,
};

const BYTES_OF_FIELDS = PET_FIELD_LIST.map((field) => ({
  name: field.name,
  bytes: FIELD_BYTES[field.kind] as (value: PetFieldKinds[PetFieldKind]) => number,
}));

/** A storage failure during a creation, told as what it means to the client: the pet may exist. */
function unconfirmedIfUnavailable(error: unknown, withKey: boolean): unknown {
  if (!(error instanceof StorageUnavailableError)) return error;
  const retry = withKey ? RETRY_WITH_THE_SAME_KEY : RETRY_WITH_A_KEY;
  return new StorageUnavailableError(`${UNCONFIRMED_CREATION}; ${retry}`, { cause: error });
}

/** How each kind of field enters the fingerprint: as a JSON value, an int64 as its digits. */
const FINGERPRINT_VALUES: {
  readonly [K in SuppliedPetFieldKind]: (value: PetFieldKinds[K]) => string | null;
} = {
  text: (value) => value,
  int64: (value) => value.toString(),
  'nullable-enum': (value) => value,
};

const FINGERPRINTED_FIELDS = NEW_PET_FIELD_LIST.map((field) => ({
  name: field.name,
  value: FINGERPRINT_VALUES[field.kind] as (value: PetFieldKinds[SuppliedPetFieldKind]) => string | null,
}));

/** The supplied fields' values in wire order, e.g. `["Rex","3",null]`, hashed. */
function fingerprintOf(pet: NewPetRecord): string {
  const values = FINGERPRINTED_FIELDS.map((field) => field.value(pet[field.name]));
  return createHash('sha256').update(JSON.stringify(values)).digest('base64url');
}

function replay(response: IdempotentResponse): CreateOutcome {
  const petId = Number((JSON.parse(response.body) as { id: number }).id);
  return { statusCode: response.statusCode, body: response.body, petId, replayed: true };
}
