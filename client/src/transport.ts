import { CallScope } from './call-scope.ts';
import { isStrongEtag, type EtagCache } from './etag-cache.ts';
import { parseJson } from './int64-json.ts';
import type { CallOptions, WaitInfo, WaitListener } from './options.ts';
import { RateLimitPacer } from './pacing.ts';
import { PetstoreError, PetstoreTimeoutError, UNEXPECTED_RESPONSE } from './petstore-error.ts';
import { rateLimitOf, type RateLimitState } from './rate-limit.ts';
import { backoffDelayMs, retryDelayMs, type RetryLimits } from './retry-policy.ts';
import type { ErrorCode } from './types.ts';
import { CLIENT_VERSION } from './version.ts';

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface TransportOptions extends RetryLimits {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: Fetch;
  readonly sleep: Sleep;
  readonly now: () => number;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
  readonly requestId: string | (() => string) | undefined;
  readonly userAgent: string | undefined;
  readonly onRetry: WaitListener | undefined;
  readonly onRateLimit: WaitListener | undefined;
  /** Where answers with a strong ETag are kept, when the client keeps them. */
  readonly etagCache: EtagCache | undefined;
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  /** Relative to the base URL, e.g. `/pets?limit=5`. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Whether the call spends the account's quota: such calls are paced. `GET /v1/usage` does not. */
  readonly spendsQuota: boolean;
  readonly options: CallOptions;
  /** Sees the headers of every answer, error answers included, before anything is thrown. */
  readonly onAnswer?: (headers: Headers, url: string) => void;
  /** Whether an answer with a strong ETag may be kept and asked for again with If-None-Match (it never changes). */
  readonly keepsEtag?: boolean;
}

export interface ApiResponse {
  /** The answer's status: 304 when it confirmed a kept answer, whose body and headers this then carries. */
  readonly status: number;
  readonly headers: Headers;
  readonly url: string;
  /** The body parsed with exact int64s. */
  readonly body: unknown;
}

/** One call in progress: what every attempt sends, its lifetime, and how far its own waits have moved time. */
interface Call {
  readonly headers: Headers;
  readonly requestId: string | undefined;
  readonly scope: CallScope;
  readonly timeoutMs: number | undefined;
  /** When timeoutMs ends the call, on the client's clock. */
  readonly deadline: number;
  /** The end of the call's latest wait, on the client's clock: a call never waits twice for the same instant. */
  waitedUntil: number;
}

type Outcome =
  | { readonly kind: 'answer'; readonly response: ApiResponse }
  | { readonly kind: 'error'; readonly error: PetstoreError }
  | { readonly kind: 'network'; readonly error: unknown };

/** A setTimeout-based sleep that an abort cuts short. */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function isErrorBody(body: unknown): body is { code: ErrorCode; message: string; status: number } {
  if (typeof body !== 'object' || body === null) return false;
  const record = body as Record<string, unknown>;
  return typeof record.code === 'string' && typeof record.message === 'string';
}

function parseBody(text: string): unknown {
  try {
    return text === '' ? undefined : parseJson(text);
  } catch {
    return undefined;
  }
}

function retryAfterOf(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  return value !== null && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

/**
 * The seconds a `rate_limited` error says to wait when its answer gave no Retry-After (the service always gives one):
 * a second, as a retry then waits.
 */
const DEFAULT_RATE_LIMITED_RETRY_AFTER = 1;

async function errorOf(response: Response): Promise<PetstoreError> {
  const text = await response.text();
  const body = parseBody(text);
  const status = response.status;
  const retryAfter = retryAfterOf(response.headers);
  const requestId = response.headers.get('x-request-id') ?? undefined;
  if (!isErrorBody(body)) {
    const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    const message = `HTTP ${response.status} without an error body from ${response.url}: ${excerpt}`;
    return new PetstoreError({ status, code: UNEXPECTED_RESPONSE, message, retryAfter, requestId });
  }
  const { code, message } = body;
  if (code !== 'rate_limited') return new PetstoreError({ status, code, message, retryAfter, requestId });
  return new PetstoreError({
    status,
    code,
    message,
    retryAfter: retryAfter ?? DEFAULT_RATE_LIMITED_RETRY_AFTER,
    requestId,
  });
}

/** setTimeout fires at once for a delay beyond a signed 32-bit count of milliseconds (about 24.8 days). */
const LONGEST_TIMEOUT_MS = 2 ** 31 - 1;

/** A timeout option, checked: a positive number of milliseconds, or none. */
export function checkedTimeout(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined) return undefined;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0 && timeoutMs <= LONGEST_TIMEOUT_MS)) {
    throw new TypeError(
      `timeoutMs must be a positive number of milliseconds, at most ${LONGEST_TIMEOUT_MS} (got ${timeoutMs})`,
    );
  }
  return timeoutMs;
}

/** Browsers send their own User-Agent: Chrome drops a script's, Firefox would make every call a CORS preflight. */
function runsInBrowser(): boolean {
  const scope = globalThis as { document?: unknown; importScripts?: unknown };
  return scope.document !== undefined || typeof scope.importScripts === 'function';
}

/** Callbacks only observe: whatever one throws or rejects with must not change the call. */
function tell(listener: WaitListener | undefined, info: WaitInfo): void {
  if (listener === undefined) return;
  try {
    const result: unknown = listener(info);
    if (result instanceof Promise) result.catch(() => undefined);
  } catch {
    // Ignored on purpose: a failing logger must not fail, or retry differently, the call it logs.
  }
}

/**
 * Whether an answer tells the account's windows. A 401 tells the client address's window, a key_banned answer
 * the ban, and any error of `GET /v1/usage` that operation's own small limit: none of them paces pets calls.
 */
function describesAccount(request: ApiRequest, status: number, code: string | undefined): boolean {
  if (!request.spendsQuota) return status >= 200 && status < 300;
  return status !== 401 && code !== 'key_banned';
}

/**
 * The kept answer's headers brought up to date by those of the 304 that confirmed it (RFC 9111 4.3.4): its rate
 * limits, request id and deprecation replace the kept ones; what a 304 does not repeat (Content-Type, perhaps Link)
 * stays.
 */
function freshened(kept: Headers, confirming: Headers): Headers {
  const headers = new Headers(kept);
  confirming.forEach((value, name) => headers.set(name, value));
  return headers;
}

/**
 * Sends requests with the key, paces those that spend quota, retries what the retry policy allows, keeps answers by
 * their ETags when told to, and remembers the rate-limit state.
 */
export class Transport {
  rateLimit: RateLimitState | undefined;
  private readonly options: TransportOptions;
  private readonly pacer = new RateLimitPacer();

  constructor(options: TransportOptions) {
    this.options = options;
  }

  async send(request: ApiRequest): Promise<ApiResponse> {
    const call = this.start(request);
    try {
      return await this.run(request, call);
    } catch (error) {
      // An abort or timeout surfaces as whatever fetch, the sleep or a body read made of it: give its own reason.
      throw call.scope.signal.aborted ? call.scope.signal.reason : error;
    } finally {
      call.scope.dispose();
    }
  }

  private start(request: ApiRequest): Call {
    const { options } = request;
    const clientId = this.options.requestId;
    const requestId = options.requestId ?? (typeof clientId === 'function' ? clientId() : clientId);
    // Built before anything is sent, so that an unfit header value throws here and is not taken for a network error.
    const headers = new Headers({ accept: 'application/json', ...request.headers });
    headers.set('authorization', `Bearer ${this.options.apiKey}`);
    if (requestId !== undefined) headers.set('x-request-id', requestId);
    if (!runsInBrowser()) {
      const suffix = options.userAgent ?? this.options.userAgent;
      headers.set('user-agent', `petstore-client/${CLIENT_VERSION}${suffix ? ` ${suffix}` : ''}`);
    }
    const timeoutMs = checkedTimeout(options.timeoutMs) ?? this.options.timeoutMs;
    const what = `${request.method} ${new URL(this.options.baseUrl).pathname}${request.path}`;
    const scope = new CallScope(
      [options.signal, this.options.signal],
      timeoutMs,
      () => new PetstoreTimeoutError(what, timeoutMs ?? 0, requestId),
    );
    const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : this.options.now() + timeoutMs;
    return { headers, requestId, scope, timeoutMs, deadline, waitedUntil: Number.NEGATIVE_INFINITY };
  }

  private async run(request: ApiRequest, call: Call): Promise<ApiResponse> {
    for (let attempt = 1; ; attempt += 1) {
      const release = request.spendsQuota ? await this.pace(call, attempt) : undefined;
      let outcome: Outcome;
      try {
        outcome = await this.attempt(request, call);
      } finally {
        release?.();
      }
      if (outcome.kind === 'answer') return outcome.response;
      const retry = attempt - 1;
      if (outcome.kind === 'network') {
        if (retry >= this.options.maxRetries) throw outcome.error;
        const delayMs = backoffDelayMs(retry, this.options);
        // A wait the call has no time left for would end in its timeout: the error it waits after tells more.
        if (this.timeLeft(call) <= delayMs) throw outcome.error;
        tell(this.options.onRetry, {
          reason: 'network_error',
          attempt: attempt + 1,
          delayMs,
          requestId: call.requestId,
        });
        await this.wait(call, delayMs);
        continue;
      }
      const { error } = outcome;
      const delayMs = retryDelayMs(error, retry, this.options);
      if (delayMs === undefined || this.timeLeft(call) <= delayMs) throw error;
      const reason = error.status === 429 ? 'rate_limited' : 'service_unavailable';
      const requestId = call.requestId ?? error.requestId;
      const info: WaitInfo = {
        reason,
        attempt: attempt + 1,
        delayMs,
        requestId,
        status: error.status,
        code: error.code,
      };
      if (reason === 'rate_limited') tell(this.options.onRateLimit, info);
      tell(this.options.onRetry, info);
      await this.wait(call, delayMs);
    }
  }

  /**
   * Holds a call until the known rate-limit state lets it through; returns the release of its place among the
   * requests in flight. A spent window is waited out when the wait fits in maxRetryDelayMs and in the time the call
   * has left, else the call is refused as the service would refuse it, without sending it (which would count
   * towards a ban).
   */
  private async pace(call: Call, attempt: number): Promise<() => void> {
    for (;;) {
      const now = Math.max(this.options.now(), call.waitedUntil);
      const gate = this.pacer.gate(now);
      if (gate.kind === 'send') return this.pacer.take();
      if (gate.kind === 'await-answer') {
        await this.pacer.nextAnswer(call.scope.signal);
        continue;
      }
      const delayMs = gate.untilMs - now;
      const left = this.timeLeft(call);
      let tooLong: string | undefined;
      if (delayMs > this.options.maxRetryDelayMs) {
        tooLong = `longer than maxRetryDelayMs (${this.options.maxRetryDelayMs} ms)`;
      } else if (left <= delayMs) {
        tooLong = `longer than the ${Math.max(0, Math.floor(left))} ms left of timeoutMs (${call.timeoutMs} ms)`;
      }
      if (tooLong !== undefined) {
        const retryAfter = Math.ceil(delayMs / 1000);
        throw new PetstoreError({
          status: 429,
          code: 'rate_limited',
          message: `not sent: the "${gate.window}" rate-limit window is spent for ${retryAfter} s more, ${tooLong}`,
          retryAfter,
        });
      }
      tell(this.options.onRateLimit, { reason: 'paced', attempt, delayMs, requestId: call.requestId });
      await this.wait(call, delayMs);
    }
  }

  /** Milliseconds until the call's timeoutMs ends it, on the client's clock; infinite without one. */
  private timeLeft(call: Call): number {
    return call.deadline - Math.max(this.options.now(), call.waitedUntil);
  }

  private async wait(call: Call, ms: number): Promise<void> {
    const start = Math.max(this.options.now(), call.waitedUntil);
    await this.options.sleep(ms, call.scope.signal);
    call.waitedUntil = start + ms;
  }

  /**
   * One fetch and its body. A network failure is an outcome to retry; an abort is thrown. An answer kept by its
   * ETag is asked for with If-None-Match, and a 304 then gives back its body.
   */
  private async attempt(request: ApiRequest, call: Call): Promise<Outcome> {
    // fetch would reject an aborted signal too, but only after the fetch given to the client has seen the request.
    call.scope.signal.throwIfAborted();
    const url = `${this.options.baseUrl}${request.path}`;
    const kept = request.keepsEtag === true ? this.options.etagCache?.get(url) : undefined;
    if (kept === undefined) call.headers.delete('if-none-match');
    else call.headers.set('if-none-match', kept.etag);
    const init: RequestInit = { method: request.method, headers: call.headers, signal: call.scope.signal };
    if (request.body !== undefined) init.body = request.body;
    let response: Response;
    try {
      response = await this.options.fetch(url, init);
    } catch (error) {
      if (call.scope.signal.aborted) throw call.scope.signal.reason;
      return { kind: 'network', error };
    }
    const answeredAt = this.options.now();
    const confirmed = response.status === 304 && kept !== undefined;
    const text = response.ok ? await response.text() : undefined;
    const error = response.ok || confirmed ? undefined : await errorOf(response);
    // GET /v1/usage's own refusals describe its own small limit, not the account's.
    if (request.spendsQuota || error === undefined) this.rateLimit = rateLimitOf(response.headers) ?? this.rateLimit;
    if (describesAccount(request, response.status, error?.code)) this.pacer.observe(response.headers, answeredAt);
    if (request.keepsEtag === true) this.keep(url, response, text);
    request.onAnswer?.(response.headers, response.url);
    if (error !== undefined) return { kind: 'error', error };
    if (confirmed) {
      const headers = freshened(kept.headers, response.headers);
      return { kind: 'answer', response: { status: 304, headers, url: response.url, body: parseBody(kept.text) } };
    }
    return {
      kind: 'answer',
      response: { status: response.status, headers: response.headers, url: response.url, body: parseBody(text ?? '') },
    };
  }

  /** Keeps a 200 with a strong ETag; any other answer but a 304 replaces what was kept for its URL. */
  private keep(url: string, response: Response, text: string | undefined): void {
    const cache = this.options.etagCache;
    if (cache === undefined || response.status === 304) return;
    const etag = response.headers.get('etag');
    if (response.status === 200 && text !== undefined && isStrongEtag(etag)) {
      cache.set(url, { etag, text, headers: response.headers });
    } else cache.delete(url);
  }
}
