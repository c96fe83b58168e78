import type { ErrorCode } from './types.ts';

/** Code given to an answer whose body is not the service's Error body (e.g. a proxy's own 502 page). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

/** The code of a PetstoreError: one of the service's codes, or `unexpected_response`. */
export type PetstoreErrorCode = ErrorCode | typeof UNEXPECTED_RESPONSE;

/** `retryAfter` of an error with code `C`: always a number for `rate_limited`, which always says how long to wait. */
type RetryAfterOf<C extends PetstoreErrorCode> = C extends 'rate_limited' ? number : number | undefined;

interface CommonDetails<C extends PetstoreErrorCode> {
  readonly status: number;
  readonly code: C;
  readonly message: string;
  /** The `X-Request-Id` of the answer: quote it to the operator. */
  readonly requestId?: string | undefined;
}

/** What a PetstoreError is made of; one with code `rate_limited` must say how many seconds to wait. */
export type PetstoreErrorDetails<C extends PetstoreErrorCode = PetstoreErrorCode> = C extends 'rate_limited'
  ? CommonDetails<C> & { readonly retryAfter: number }
  : C extends PetstoreErrorCode
    ? CommonDetails<C> & { readonly retryAfter?: number | undefined }
    : never;

/** A PetstoreError of one code. */
interface PetstoreErrorOf<C extends PetstoreErrorCode> extends Error {
  readonly name: 'PetstoreError';
  readonly status: number;
  readonly code: C;
  /** Seconds to wait: the answer's `Retry-After`. Always a number for `rate_limited`. */
  readonly retryAfter: RetryAfterOf<C>;
  /** The `X-Request-Id` of the answer: quote it to the operator. */
  readonly requestId: string | undefined;
}

/**
 * Every non-2xx answer of the service, as thrown by the client: a union by `code`, so that checking the code narrows
 * the rest (after `error.code === 'rate_limited'`, `error.retryAfter` is a number). `PetstoreError<'not_found'>` is
 * the error of one code.
 */
export type PetstoreError<C extends PetstoreErrorCode = PetstoreErrorCode> = C extends PetstoreErrorCode
  ? PetstoreErrorOf<C>
  : never;

/** The class of every PetstoreError. Its `prototype` is typed as the union, so that `instanceof` narrows to it. */
export interface PetstoreErrorConstructor {
  new <D extends PetstoreErrorDetails>(details: D): PetstoreError<D['code']>;
  readonly prototype: PetstoreError;
}

// One class for every code; the union above is its type. The class expression keeps the name PetstoreError.
export const PetstoreError = class PetstoreError extends Error {
  override readonly name = 'PetstoreError';
  readonly status: number;
  readonly code: PetstoreErrorCode;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(details: PetstoreErrorDetails) {
    super(details.message);
    this.status = details.status;
    this.code = details.code;
    this.retryAfter = details.retryAfter;
    this.requestId = details.requestId;
  }
} as PetstoreErrorConstructor;

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
