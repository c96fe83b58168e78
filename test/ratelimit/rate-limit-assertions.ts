import assert from 'node:assert/strict';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';

/** What the rate-limit suites over HTTP share: the instants they stand the clock on and the header checks. */

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** 2026-06-01T12:00:30Z: mid-minute, so a minute window has 30 s left. */
export const MID = Date.UTC(2026, 5, 1, 12, 0, 30);
export const MID_SECONDS = MID / 1000;
export const NEXT_MINUTE_SECONDS = Date.UTC(2026, 5, 1, 12, 1, 0) / 1000;
export const NEXT_MIDNIGHT_SECONDS = Date.UTC(2026, 5, 2) / 1000;
/** Seconds from MID to the next UTC midnight. */
export const DAY_LEFT_SECONDS = NEXT_MIDNIGHT_SECONDS - MID_SECONDS;

/** Every header that tells a client about its rate limit. */
export const RATE_LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
] as const;

export interface RateLimitHeaders {
  readonly limit: number;
  readonly remaining: number;
  readonly reset: number;
  readonly policy: string;
  readonly state: string;
}

function integerHeader(headers: Headers, name: string): number {
  const value = headers.get(name);
  assert.ok(value !== null, `${name} must be present`);
  assert.match(value, /^(0|[1-9][0-9]*)$/, `${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Every rate-limit field of a response, checked for shape. */
export function rateLimitOf(answer: HttpAnswer): RateLimitHeaders {
  const policy = answer.headers.get('ratelimit-policy');
  const state = answer.headers.get('ratelimit');
  assert.ok(policy !== null, `RateLimit-Policy must be present on ${answer.status}`);
  assert.ok(state !== null, `RateLimit must be present on ${answer.status}`);
  assert.match(policy, /^"[a-z]+";q=\d+;w=\d+(, "[a-z]+";q=\d+;w=\d+)*$/);
  assert.match(state, /^"[a-z]+";r=\d+;t=\d+(, "[a-z]+";r=\d+;t=\d+)*$/);
  return {
    limit: integerHeader(answer.headers, 'x-ratelimit-limit'),
    remaining: integerHeader(answer.headers, 'x-ratelimit-remaining'),
    reset: integerHeader(answer.headers, 'x-ratelimit-reset'),
    policy,
    state,
  };
}

/** The window X-RateLimit-Limit/-Remaining/-Reset describe, once every rate-limit field is checked for shape. */
export function describedWindowOf(answer: HttpAnswer): Pick<RateLimitHeaders, 'limit' | 'remaining' | 'reset'> {
  const { limit, remaining, reset } = rateLimitOf(answer);
  return { limit, remaining, reset };
}

export function retryAfterOf(answer: HttpAnswer): number {
  const seconds = integerHeader(answer.headers, 'retry-after');
  assert.ok(seconds >= 1, `Retry-After must be at least 1, got ${seconds}`);
  return seconds;
}

export function assertRefused(answer: HttpAnswer, code: 'rate_limited' | 'key_banned'): void {
  assert.equal(answer.status, 429, answer.text);
  assert.equal(errorOf(answer).code, code, answer.text);
  retryAfterOf(answer);
}

/** Sends requests until the key is banned; returns how many 429 rate_limited came first. */
export async function driveToBan(
  app: { readonly url: string },
  key: string,
): Promise<{ limited: number; banned: HttpAnswer }> {
  let limited = 0;
  for (let i = 0; i < 10_000; i += 1) {
    const answer = await request(app, '/v1/pets', { key });
    if (answer.status === 200) {
      assert.equal(limited, 0, 'no request may pass between the first 429 and the ban');
      continue;
    }
    assert.equal(answer.status, 429, answer.text);
    const code = errorOf(answer).code;
    if (code === 'key_banned') return { limited, banned: answer };
    assert.equal(code, 'rate_limited');
    limited += 1;
  }
  assert.fail('the key was never banned');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
