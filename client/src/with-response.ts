import { rateLimitOf, type RateLimitState } from './rate-limit.ts';
import type { ApiResponse } from './transport.ts';

/** A call's result with the metadata of the answer that carried it: what `client.withResponse` calls give. */
export interface PetstoreResponse<T> {
  readonly data: T;
  /**
   * The answer's status: 200, or 201 for a creation; 304 when the client sent a kept ETag (option `etagCache`) and
   * the service confirmed it, `data` then being the kept body.
   */
  readonly status: number;
  /** The answer's headers; for a 304, those of the kept answer brought up to date by the 304's. */
  readonly headers: Headers;
  /** The answer's `X-Request-Id`: quote it to the operator. */
  readonly requestId: string | undefined;
  /** The rate-limit state this answer told (as `client.rateLimit` keeps the latest); undefined without one. */
  readonly rateLimit: RateLimitState | undefined;
}

export function responseOf<T>(answer: ApiResponse, data: T): PetstoreResponse<T> {
  return {
    data,
    status: answer.status,
    headers: answer.headers,
    requestId: answer.headers.get('x-request-id') ?? undefined,
    rateLimit: rateLimitOf(answer.headers),
  };
}
