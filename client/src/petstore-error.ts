import type { ErrorCode } from './types.ts';

/** Code given to an answer whose body is not the service's Error body (e.g. a proxy's own 502 page). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

export interface PetstoreErrorDetails {
  readonly status: number;
  readonly code: ErrorCode | typeof UNEXPECTED_RESPONSE;
  readonly message: string;
  /** Seconds to wait, when the answer carried `Retry-After`. */
  readonly retryAfter?: number | undefined;
  /** The `X-Request-Id` of the answer: quote it to the operator. */
  readonly requestId?: string | undefined;
}

/** Every non-2xx answer of the service, as thrown by the client. */
export class PetstoreError extends Error {
  override readonly name = 'PetstoreError';
  readonly status: number;
  readonly code: ErrorCode | typeof UNEXPECTED_RESPONSE;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(details: PetstoreErrorDetails) {
    super(details.message);
    this.status = details.status;
    this.code = details.code;
    this.retryAfter = details.retryAfter;
    this.requestId = details.requestId;
  }
}

/** A call that did not complete within its `timeoutMs`, retries and waits included. */
export class PetstoreTimeoutError extends Error {
  override readonly name = 'PetstoreTimeoutError';
  readonly timeoutMs: number;
  /** The call's own X-Request-Id, when it sent one. */
  readonly requestId: string | undefined;

  constructor(what: string, timeoutMs: number, requestId: string | undefined) {
    super(`${what} did not complete within ${timeoutMs} ms (retries and waits included)`);
    this.timeoutMs = timeoutMs;
    this.requestId = requestId;
  }
}
