import { warnIfDeprecated, type UsageReader } from './deprecation-warning.ts';
import { newPetJson } from './int64-json.ts';
import { linkTarget } from './link-header.ts';
import type { CallOptions, PetstoreClientOptions, WaitListener } from './options.ts';
import { randomUuid } from './random-uuid.ts';
import type { RateLimitState } from './rate-limit.ts';
import { checkedTimeout, timerSleep, Transport } from './transport.ts';
import type { Int64, NewPet, Pet, PetStatus, Usage, UsageGranularity, UsageHistory } from './types.ts';

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

export interface UsageHistoryOptions extends CallOptions {
  /**
   * Start of the range: a Date, or an ISO 8601 date or date-time string. Rounded down to its bucket. Default:
   * 24 hours before `to` (hourly), 30 days before it (daily).
   */
  readonly from?: Date | string | undefined;
  /** End of the range, exclusive: a Date or an ISO 8601 string; rounded up to its bucket. Default: now. */
  readonly to?: Date | string | undefined;
  /** `hour` (the service's default) or `day`, in UTC. */
  readonly granularity?: UsageGranularity | undefined;
}

/**
 * The usage of the caller's account; neither call counts against the account's quota. Called itself, it reads
 * `GET /v1/usage`.
 */
export interface UsageApi {
  /** The account, plan, both windows, the key's state, and the account's calls of deprecated operations. */
  (options?: CallOptions): Promise<Usage>;
  /** The account's requests per UTC hour or day, by operation and outcome, in `[from, to)` (at most 90 days). */
  history(options?: UsageHistoryOptions): Promise<UsageHistory>;
}

/** How long the deprecation warning waits for its one read of the account's usage before warning without it. */
const WARNING_USAGE_TIMEOUT_MS = 5000;

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

function instantText(name: string, value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError(`${name} is an invalid Date`);
    return value.toISOString();
  }
  if (typeof value !== 'string') throw new TypeError(`${name} must be a Date or an ISO 8601 string`);
  return value;
}

function historyQuery(options: UsageHistoryOptions): string {
  const query = new URLSearchParams();
  if (options.from !== undefined) query.set('from', instantText('from', options.from));
  if (options.to !== undefined) query.set('to', instantText('to', options.to));
  if (options.granularity !== undefined) query.set('granularity', options.granularity);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

function usageApi(transport: Transport): UsageApi {
  const read = async (options: CallOptions = {}): Promise<Usage> => {
    const response = await transport.send({ method: 'GET', path: '/usage', spendsQuota: false, options });
    return response.body as Usage;
  };
  const history = async (options: UsageHistoryOptions = {}): Promise<UsageHistory> => {
    const path = `/usage/history${historyQuery(options)}`;
    const response = await transport.send({ method: 'GET', path, spendsQuota: false, options });
    return response.body as UsageHistory;
  };
  return Object.assign(read, { history });
}

/** The operations on pets. */
export class PetsApi {
  private readonly transport: Transport;
  private readonly readUsage: UsageReader | undefined;

  constructor(transport: Transport, readUsage?: UsageReader) {
    this.transport = transport;
    this.readUsage = readUsage;
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
   * in the process emits a warning, which names the account's calls of it in the last 30 days and the keys
   * that made them (read once from `GET /v1/usage`). Prefer `list({ status })`.
   */
  async get(id: Int64, options: CallOptions = {}): Promise<Pet> {
    const path = `/pets/${encodeURIComponent(String(id))}`;
    const response = await this.transport.send({
      method: 'GET',
      path,
      spendsQuota: true,
      options,
      onAnswer: (headers, url) => warnIfDeprecated(headers, url, this.readUsage),
    });
    return response.body as Pet;
  }
}

/** A client of the petstore API, version 1. */
export class PetstoreClient {
  readonly pets: PetsApi;
  /** `usage()` and `usage.history()`: the account's standing and its recorded requests; they spend no quota. */
  readonly usage: UsageApi;
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
    this.usage = usageApi(this.transport);
    // The warning's read goes straight to GET /v1/usage, whose answers never carry Deprecation: no recursion.
    this.pets = new PetsApi(this.transport, () => this.usage({ timeoutMs: WARNING_USAGE_TIMEOUT_MS }));
  }

  /** The rate-limit state of the last response that carried one; undefined before the first. */
  get rateLimit(): RateLimitState | undefined {
    return this.transport.rateLimit;
  }
}
