/**
 * What storage keeps of pets and of idempotent creations: the part of the storage seam
 * (src/domain/store.ts) the pet service calls. Times are milliseconds since the epoch.
 */
import type { NewPetRecord, PetRecord, PetStatus } from './pet.ts';

export interface PetListQuery {
  /** Only pets with an id strictly greater than this (0 for the first page). */
  readonly afterId: number;
  readonly limit: number;
  readonly status: PetStatus | undefined;
}

/** A stored response to a POST carrying an Idempotency-Key. */
export interface IdempotentResponse {
  readonly statusCode: number;
  readonly body: string;
}

export interface IdempotencyScope {
  readonly accountId: number;
  readonly key: string;
}

/** A creation carrying an Idempotency-Key: the request's fingerprint and how its 201 is stored. */
export interface IdempotentCreate extends IdempotencyScope {
  readonly fingerprint: string;
  respond(pet: PetRecord): IdempotentResponse;
}

/**
 * What an idempotent creation found: nothing, so it created the pet and stored the response in the
 * same commit; or a completed earlier request with this key (whose fingerprint may differ).
 */
export type IdempotentOutcome =
  | { readonly state: 'created'; readonly pet: PetRecord }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly response: IdempotentResponse };

export interface PetStore {
  /** Inserts the pet durably; resolves only after the commit is on disk. */
  create(pet: NewPetRecord, now: number): Promise<PetRecord>;
  /**
   * One transaction under a lock on (account, key): replays a completed record, or inserts the pet
   * and its completed record together, so no claim outlives a failed request and a commit whose
   * answer was lost is found by the retry. A request still waiting for that lock when its wait
   * ends gets IdempotencyInFlightError.
   */
  createIdempotent(pet: NewPetRecord, now: number, request: IdempotentCreate): Promise<IdempotentOutcome>;
  get(id: number): Promise<PetRecord | undefined>;
  /** Ascending id, at most `limit` rows. */
  list(query: PetListQuery): Promise<PetRecord[]>;
}

/** A completed request's record: the fingerprint of what it asked and the response it got. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly createdAt: number;
  readonly response: IdempotentResponse;
}

/**
 * Idempotency records read and written in the transaction of another change (a key created through
 * the public API), so the change and its record commit together.
 */
export interface IdempotencyRecords {
  find(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined>;
  /** Stores the completed record, replacing an earlier one under the same scope. */
  store(scope: IdempotencyScope, record: IdempotencyRecord): Promise<void>;
}

export interface IdempotencyStore {
  /** Deletes records created before `before`. */
  purge(before: number): Promise<number>;
}
