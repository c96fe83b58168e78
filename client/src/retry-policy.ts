import type { PetstoreError } from './petstore-error.ts';

/** First backoff bound; each further retry doubles it (full jitter picks a delay below the bound). */
export const BACKOFF_BASE_MS = 250;

export interface RetryLimits {
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
}

/** Exponential backoff with full jitter: a random delay below min(maxRetryDelayMs, base · 2^retry). */
export function backoffDelayMs(retry: number, limits: RetryLimits): number {
  return Math.random() * Math.min(limits.maxRetryDelayMs, BACKOFF_BASE_MS * 2 ** retry);
}

/**
 * How long to wait before retrying an error answer, or undefined to throw it now. A 429 rate_limited is
 * waited out for its Retry-After and a 503 is backed off; anything else (key_banned, every other 4xx,
 * 500: a fault a retry does not cure) is final, and so is any wait beyond maxRetryDelayMs.
 */
export function retryDelayMs(error: PetstoreError, retry: number, limits: RetryLimits): number | undefined {
  if (retry >= limits.maxRetries) return undefined;
  let delay: number;
  if (error.code === 'rate_limited' && error.status === 429) delay = error.retryAfter * 1000;
  else if (error.status === 503) delay = Math.max(backoffDelayMs(retry, limits), (error.retryAfter ?? 0) * 1000);
  else return undefined;
  return delay > limits.maxRetryDelayMs ? undefined : delay;
}
