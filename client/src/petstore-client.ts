import { warnIfDeprecated } from './deprecation-warning.ts';
import { newPetJson } from './int64-json.ts';
import { linkTarget } from './link-header.ts';
import type { CallOptions, PetstoreClientOptions, WaitListener } from './options.ts';
import { randomUuid } from './random-uuid.ts';
import type { RateLimitState } from './rate-limit.ts';
import { checkedTimeout, timerSleep, Transport } from './transport.ts';
import type { Int64, NewPet, Pet, PetStatus, Usage } from './types.ts';

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
  /** Sent as `Idempotency-Key`; a random UUID when absent. Every retry of the call sends the same one. */
  readonly idempotencyKey?: string | undefined;
}

const VERSION_SUFFIX = '/v1';

function checkedBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/$/, '');
  const url = new URL(trimmed);
  if (!url.pathname.endsWith(VERSION_SUFFIX) || url.search !== '' || url.hash !== '') {
    throw new TypeError(`baseUrl must end in ${VERSION_SUFFIX}, e.g. http://127.0.0.1:8080/v1 (got ${baseUrl})`);
  }
  return trimmed;
}

function checkedCount(name: string, value: number, minimum: number): number {
  if (!Number.isInteger(value) || value < minimum) {
    throw new TypeError(`${name} must be an integer of at least ${minimum} (got ${value})`);
  }
  return value;
}

function checkedFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${name} must be a function`);
  return value;
}

function pageQuery(options: ListPageOptions): string {
  const query = new URLSearchParams();
  if (options.status !== undefined) query.set('status', options.status);
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** The operations on pets. */
export class PetsApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** One page of pets in ascending id order, and the cursor of the next page. */
  async listPage(options: ListPageOptions = {}): Promise<PetPage> {
    const path = `/pets${pageQuery(options)}`;
    const response = await this.transport.send({ method: 'GET', path, spendsQuota: true, options });
    const next = linkTarget(response.headers, 'next', response.url);
    return { pets: response.body as Pet[], nextCursor: next?.searchParams.get('cursor') ?? undefined };
  }

  /** Every matching pet, in ascending id order, page after page along each page's `Link: rel="next"`. */
  async *list(options: ListOptions = {}): AsyncGenerator<Pet, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...options, cursor });
      yield* page.pets;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** Adds a pet. The Idempotency-Key makes the call's retries safe: the service creates the pet once. */
  async create(pet: NewPet, options: CreateOptions = {}): Promise<Pet> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    const response = await this.transport.send({
      method: 'POST',
      path: '/pets',
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: newPetJson(pet),
      spendsQuota: true,
      options,
    });
    return response.body as Pet;
  }

  /**
   * One pet by id. Deprecated by the service (removed on 5 December 2030): the first deprecated answer
   * in the process emits a warning. Prefer `list({ status })`.
   */
  async get(id: Int64, options: CallOptions = {}): Promise<Pet> {
    const path = `/pets/${encodeURIComponent(String(id))}`;
    const response = await this.transport.send({
      method: 'GET',
      path,
      spendsQuota: true,
      options,
      onAnswer: warnIfDeprecated,
    });
    return response.body as Pet;
  }
}

/** A client of the petstore API, version 1. */
export class PetstoreClient {
  readonly pets: PetsApi;
  private readonly transport: Transport;

  constructor(options: PetstoreClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required');
    if (options.fetch === undefined && typeof globalThis.fetch !== 'function') {
      throw new TypeError('this runtime has no global fetch: pass options.fetch');
    }
    this.transport = new Transport({
      baseUrl: checkedBaseUrl(options.baseUrl),
      apiKey: options.apiKey,
      maxRetries: checkedCount('maxRetries', options.maxRetries ?? 3, 0),
      maxRetryDelayMs: checkedCount('maxRetryDelayMs', options.maxRetryDelayMs ?? 60_000, 0),
      // Bound to globalThis: browsers refuse a fetch called as a method of another object.
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      sleep: options.sleep ?? timerSleep,
      now: checkedFunction('now', options.now) ?? Date.now,
      signal: options.signal,
      timeoutMs: checkedTimeout(options.timeoutMs),
      requestId: options.requestId,
      userAgent: options.userAgent,
      onRetry: checkedFunction<WaitListener>('onRetry', options.onRetry),
      onRateLimit: checkedFunction<WaitListener>('onRateLimit', options.onRateLimit),
    });
    this.pets = new PetsApi(this.transport);
  }

  /** The rate-limit state of the last response that carried one; undefined before the first. */
  get rateLimit(): RateLimitState | undefined {
    return this.transport.rateLimit;
  }

  /** The caller's account, plan, windows and key state; does not count against the account's quota. */
  async usage(options: CallOptions = {}): Promise<Usage> {
    const response = await this.transport.send({ method: 'GET', path: '/usage', spendsQuota: false, options });
    return response.body as Usage;
  }
}
