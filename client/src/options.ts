import type { Fetch, Sleep } from './transport.ts';

/** Why the client waits: see `onRetry` and `onRateLimit`. */
export type WaitReason = 'rate_limited' | 'service_unavailable' | 'network_error' | 'paced';

/** What `onRetry` and `onRateLimit` are told before a wait. */
export interface WaitInfo {
  readonly reason: WaitReason;
  /** The attempt that follows the wait: 1 is the call's first sending, 2 its first retry, and so on. */
  readonly attempt: number;
  readonly delayMs: number;
  /** The call's own X-Request-Id when it sends one, else the X-Request-Id of the answer that led to the wait. */
  readonly requestId: string | undefined;
  /** The status of the answer that led to the wait (429, 503); absent for network errors and paced waits. */
  readonly status?: number;
  /** The error code of that answer, e.g. `rate_limited`. */
  readonly code?: string;
}

/** A callback run before a wait. What it returns is ignored, and so is what it throws. */
export type WaitListener = (info: WaitInfo) => void;

/** Options of every call; given to the client, they apply to every call that does not give its own. */
export interface CallOptions {
  /** Aborts the call, its retries and its waits: the call rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** Longest time for the whole call, retries and waits included; it then rejects with a PetstoreTimeoutError. */
  readonly timeoutMs?: number | undefined;
  /** Sent as `X-Request-Id` by every attempt of the call, which the service echoes and logs. */
  readonly requestId?: string | undefined;
  /** Appended to the User-Agent, `petstore-client/<version>` (outside browsers, which send their own). */
  readonly userAgent?: string | undefined;
}

export interface PetstoreClientOptions extends Omit<CallOptions, 'requestId'> {
  /** The API's base URL, ending in the version segment: e.g. `https://api.example.com/v1`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Sent as `X-Request-Id` by calls that give none; a function gives one per call. None by default. */
  readonly requestId?: string | (() => string) | undefined;
  /** Retries of one call after a 429 rate_limited, a 503 or a network error. Default 3. */
  readonly maxRetries?: number | undefined;
  /** Longest wait before a retry or a paced call; one asking for more is thrown at once. Default 60000. */
  readonly maxRetryDelayMs?: number | undefined;
  /** Run before every wait that precedes a retry. */
  readonly onRetry?: WaitListener | undefined;
  /** Run before every wait the rate limit causes: a 429 rate_limited's retry, and a paced call. */
  readonly onRateLimit?: WaitListener | undefined;
  /** The fetch to use; the global one by default. */
  readonly fetch?: Fetch | undefined;
  /** How the client waits; setTimeout-based by default. */
  readonly sleep?: Sleep | undefined;
  /**
   * The clock the client paces by, and measures the time a call has left by, in milliseconds; `Date.now` by default.
   * A `sleep` that does not wait moves it.
   */
  readonly now?: (() => number) | undefined;
  /**
   * Keeps the answers of `pets.get` and the full pages of `pets.list` and `listPage` by their strong ETags and asks
   * for them again with `If-None-Match`: a 304 gives back the kept body. `true` keeps up to 500, the least recently
   * used going first; `{ maxEntries }` sets the bound. Off by default.
   */
  readonly etagCache?: boolean | EtagCacheOptions | undefined;
}

export interface EtagCacheOptions {
  /** How many answers to keep, at least 1. Default 500. */
  readonly maxEntries?: number | undefined;
}
