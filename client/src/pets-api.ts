import { warnIfDeprecated, type UsageReader } from './deprecation-warning.ts';
import { newPetJson } from './int64-json.ts';
import { linkTarget } from './link-header.ts';
import type { CallOptions } from './options.ts';
import { randomUuid } from './random-uuid.ts';
import type { Transport } from './transport.ts';
import type { Int64, NewPet, Pet, PetStatus } from './types.ts';
import { responseOf, type PetstoreResponse } from './with-response.ts';

export interface ListOptions extends CallOptions {
  readonly status?: PetStatus | undefined;
  /** Pets per page, 1 to 100 (the service's default is 20). */
  readonly limit?: number | undefined;
}

export interface ListPageOptions extends ListOptions {
  /** The cursor of the previous page; none for the first page. */
  readonly cursor?: string | undefined;
}

export interface PetPage {
  readonly pets: Pet[];
  /** The cursor of the next page; undefined on the last page. */
  readonly nextCursor: string | undefined;
}

export interface CreateOptions extends CallOptions {
  /** Sent as `Idempotency-Key`; a random UUID when absent. Every retry of the call sends the same key. */
  readonly idempotencyKey?: string | undefined;
}

function pageQuery(options: ListPageOptions): string {
  const query = new URLSearchParams();
  if (options.status !== undefined) query.set('status', options.status);
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * The operations on pets, each giving its result with the metadata of the answer that carried it
 * (`client.withResponse.pets`).
 */
export class PetsWithResponseApi {
  private readonly transport: Transport;
  private readonly readUsage: UsageReader | undefined;

  constructor(transport: Transport, readUsage?: UsageReader) {
    this.transport = transport;
    this.readUsage = readUsage;
  }

  /** One page of pets and the cursor of the next page, with the page's answer. */
  async listPage(options: ListPageOptions = {}): Promise<PetstoreResponse<PetPage>> {
    const path = `/pets${pageQuery(options)}`;
    const answer = await this.transport.send({ method: 'GET', path, spendsQuota: true, options, keepsEtag: true });
    const next = linkTarget(answer.headers, 'next', answer.url);
    const pets = answer.body as Pet[];
    return responseOf(answer, { pets, nextCursor: next?.searchParams.get('cursor') ?? undefined });
  }

  /** Every matching pet, as `pets.list` yields them, each with the answer of its page. */
  async *list(options: ListOptions = {}): AsyncGenerator<PetstoreResponse<Pet>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...options, cursor });
      for (const pet of page.data.pets) yield { ...page, data: pet };
      cursor = page.data.nextCursor;
    } while (cursor !== undefined);
  }

  /** Adds a pet, as `pets.create` does, with the answer (201). */
  async create(pet: NewPet, options: CreateOptions = {}): Promise<PetstoreResponse<Pet>> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    const answer = await this.transport.send({
      method: 'POST',
      path: '/pets',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: newPetJson(pet),
      spendsQuota: true,
      options,
    });
    return responseOf(answer, answer.body as Pet);
  }

  /**
   * One pet by id, with the answer.
   *
   * @deprecated `GET /v1/pets/{petId}` is removed on 5 December 2030 (it then answers `410 gone`). Use
   * `GET /v1/pets` with the `status` filter: `client.withResponse.pets.list({ status })`.
   */
  async get(id: Int64, options: CallOptions = {}): Promise<PetstoreResponse<Pet>> {
    const answer = await this.transport.send({
      method: 'GET',
      path: `/pets/${encodeURIComponent(String(id))}`,
      spendsQuota: true,
      options,
      keepsEtag: true,
      onAnswer: (headers, url) => warnIfDeprecated(headers, url, this.readUsage),
    });
    return responseOf(answer, answer.body as Pet);
  }
}

/** The operations on pets (`client.pets`). */
export class PetsApi {
  private readonly withResponse: PetsWithResponseApi;

  constructor(withResponse: PetsWithResponseApi) {
    this.withResponse = withResponse;
  }

  /** One page of pets in ascending id order, and the cursor of the next page. */
  async listPage(options: ListPageOptions = {}): Promise<PetPage> {
    return (await this.withResponse.listPage(options)).data;
  }

  /** Every matching pet, in ascending id order, page after page along each page's `Link: rel="next"`. */
  async *list(options: ListOptions = {}): AsyncGenerator<Pet, void, undefined> {
    for await (const pet of this.withResponse.list(options)) yield pet.data;
  }

  /** Adds a pet. The Idempotency-Key makes the call's retries safe: the service creates the pet once. */
  async create(pet: NewPet, options: CreateOptions = {}): Promise<Pet> {
    return (await this.withResponse.create(pet, options)).data;
  }

  /**
   * One pet by id. The first deprecated answer in the process emits a warning, which names the account's calls of
   * it in the last 30 days and the keys that made them (read once from `GET /v1/usage`).
   *
   * @deprecated `GET /v1/pets/{petId}` is removed on 5 December 2030 (it then answers `410 gone`). Use
   * `GET /v1/pets` with the `status` filter: `client.pets.list({ status })`.
   */
  async get(id: Int64, options: CallOptions = {}): Promise<Pet> {
    return (await this.withResponse.get(id, options)).data;
  }
}
