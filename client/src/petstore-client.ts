import { DEFAULT_ETAG_ENTRIES, EtagCache } from './etag-cache.ts';
import type { PetstoreClientOptions, WaitListener } from './options.ts';
import { KeysApi, KeysWithResponseApi } from './keys-api.ts';
import { PetsApi, PetsWithResponseApi } from './pets-api.ts';
import type { RateLimitState } from './rate-limit.ts';
import { checkedTimeout, timerSleep, Transport } from './transport.ts';
import { usageApi, usageWithResponseApi, type UsageApi, type UsageWithResponseApi } from './usage-api.ts';

/** The client's calls, each giving `{ data, status, headers, requestId, rateLimit }` (`client.withResponse`). */
export interface WithResponseApi {
  readonly pets: PetsWithResponseApi;
  readonly usage: UsageWithResponseApi;
  readonly keys: KeysWithResponseApi;
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

function etagCacheOf(option: PetstoreClientOptions['etagCache']): EtagCache | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return new EtagCache(DEFAULT_ETAG_ENTRIES);
  if (typeof option !== 'object' || option === null) throw new TypeError('etagCache must be a boolean or an object');
  return new EtagCache(checkedCount('etagCache.maxEntries', option.maxEntries ?? DEFAULT_ETAG_ENTRIES, 1));
}

/** A client of the petstore API, version 1. */
export class PetstoreClient {
  readonly pets: PetsApi;
  /** `usage()` and `usage.history()`: the account's standing and its recorded requests; they spend no quota. */
  readonly usage: UsageApi;
  /** The account's keys, for a key that holds `keys:manage`: list, create, roll, revoke. */
  readonly keys: KeysApi;
  /**
   * The same calls, each giving its result with the metadata of the answer that carried it:
   * `{ data, status, headers, requestId, rateLimit }`. `list` yields each pet so, with its page's answer.
   */
  readonly withResponse: WithResponseApi;
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
      etagCache: etagCacheOf(options.etagCache),
    });
    const usage = usageWithResponseApi(this.transport);
    this.usage = usageApi(usage);
    // The warning's read goes straight to GET /v1/usage, whose answers never carry Deprecation: no recursion.
    const pets = new PetsWithResponseApi(this.transport, () => this.usage({ timeoutMs: WARNING_USAGE_TIMEOUT_MS }));
    this.pets = new PetsApi(pets);
    const keys = new KeysWithResponseApi(this.transport);
    this.keys = new KeysApi(keys);
    this.withResponse = { pets, usage, keys };
  }

  /** The rate-limit state of the last response that carried one; undefined before the first. */
  get rateLimit(): RateLimitState | undefined {
    return this.transport.rateLimit;
  }
}
