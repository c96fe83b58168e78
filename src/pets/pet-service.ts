import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { GoneError, IdempotencyConflictError, NotFoundError } from '../errors.ts';
import type { IdempotentResponse, NewPetRecord, PetRecord, PetStatus, Store } from '../storage/store.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { LRUCache } from 'lru-cache';
import { petsToJson, petToJson } from './pet-json.ts';

export interface PetPage {
  readonly pets: readonly PetRecord[];
  /** The page as a JSON array (Pets). */
  readonly json: string;
  /** Present when more pets may follow. */
  readonly nextCursor: string | undefined;
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

export interface Deprecation {
  readonly deprecatedAt: Date;
  readonly sunsetAt: Date;
}

/** Keys are kept at least this long (decisions: at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Pets never change once created (v1 has no update or delete) and ids are assigned, and become
 * visible, in increasing order on every backend. So a pet, and a page that was full when read
 * (more pets followed it), are the same forever, on every instance: both are cached. The last,
 * partial page is always read from storage, so new pets appear at once.
 */
const CACHED_PETS = 20_000;
const CACHED_PAGES = 2_000;

export class PetService {
  private readonly store: Store;
  private readonly clock: Clock;
  readonly deprecation: Deprecation;
  private readonly pets = new LRUCache<number, PetRecord>({ max: CACHED_PETS });
  private readonly fullPages = new LRUCache<string, PetPage>({ max: CACHED_PAGES });

  constructor(store: Store, clock: Clock, deprecation: Deprecation) {
    this.store = store;
    this.clock = clock;
    this.deprecation = deprecation;
  }

  async create(pet: NewPetRecord, idempotency?: IdempotencyRequest): Promise<CreateOutcome> {
    const now = this.clock.now();
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
    if (rows.length <= limit) return { pets: rows, json: petsToJson(rows), nextCursor: undefined };
    const pets = rows.slice(0, limit);
    const page = { pets, json: petsToJson(pets), nextCursor: encodeCursor((pets[pets.length - 1] as PetRecord).id) };
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

function fingerprintOf(pet: NewPetRecord): string {
  return createHash('sha256')
    .update(JSON.stringify([pet.name, pet.categoryId.toString(), pet.status]))
    .digest('base64url');
}

function replay(response: IdempotentResponse): CreateOutcome {
  const petId = Number((JSON.parse(response.body) as { id: number }).id);
  return { statusCode: response.statusCode, body: response.body, petId, replayed: true };
}
