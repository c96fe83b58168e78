import { parseJson } from './int64-json.ts';
import { PetstoreError, UNEXPECTED_RESPONSE } from './petstore-error.ts';
import { rateLimitOf, type RateLimitState } from './rate-limit.ts';
import { backoffDelayMs, retryDelayMs, type RetryLimits } from './retry-policy.ts';
import type { ErrorCode } from './types.ts';

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface TransportOptions extends RetryLimits {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: Fetch;
  readonly sleep: Sleep;
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  /** Relative to the base URL, e.g. `/pets?limit=5`. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly signal?: AbortSignal | undefined;
  /** Sees the headers of every answer, error answers included, before anything is thrown. */
  readonly onAnswer?: (headers: Headers, url: string) => void;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly url: string;
  /** The body parsed with exact int64s. */
  readonly body: unknown;
}

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

async function errorOf(response: Response): Promise<PetstoreError> {
  const text = await response.text();
  const body = parseBody(text);
  const common = {
    status: response.status,
    retryAfter: retryAfterOf(response.headers),
    requestId: response.headers.get('x-request-id') ?? undefined,
  };
  if (isErrorBody(body)) return new PetstoreError({ ...common, code: body.code, message: body.message });
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const message = `HTTP ${response.status} without an error body from ${response.url}: ${excerpt}`;
  return new PetstoreError({ ...common, code: UNEXPECTED_RESPONSE, message });
}

/** Sends requests with the key, retries what the retry policy allows, and remembers the rate-limit state. */
export class Transport {
  rateLimit: RateLimitState | undefined;
  private readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    this.options = options;
  }

  async send(request: ApiRequest): Promise<ApiResponse> {
    for (let retry = 0; ; retry += 1) {
      const response = await this.attempt(request, retry);
      if (response === undefined) continue;
      this.rateLimit = rateLimitOf(response.headers) ?? this.rateLimit;
      request.onAnswer?.(response.headers, response.url);
      if (response.ok) {
        const body = parseBody(await response.text());
        return { status: response.status, headers: response.headers, url: response.url, body };
      }
      const error = await errorOf(response);
      const delay = retryDelayMs(error, retry, this.options);
      if (delay === undefined) throw error;
      await this.options.sleep(delay, request.signal);
    }
  }

  /** One fetch; a network failure is backed off and answered undefined while retries remain, else rethrown. */
  private async attempt(request: ApiRequest, retry: number): Promise<Response | undefined> {
    const headers = { accept: 'application/json', authorization: `Bearer ${this.options.apiKey}`, ...request.headers };
    const init: RequestInit = { method: request.method, headers };
    if (request.body !== undefined) init.body = request.body;
    if (request.signal !== undefined) init.signal = request.signal;
    try {
      return await this.options.fetch(`${this.options.baseUrl}${request.path}`, init);
    } catch (error) {
      if (request.signal?.aborted || retry >= this.options.maxRetries) throw error;
      await this.options.sleep(backoffDelayMs(retry, this.options), request.signal);
      return undefined;
    }
  }
}
