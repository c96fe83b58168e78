/**
 * The limiter seam: one atomic operation per request. Implementations: memory-limiter.ts (one
 * instance) and redis-limiter.ts (shared by every instance). Windows are fixed and aligned to UTC:
 * a window of `seconds` starts at a multiple of `seconds` since the epoch (minutes, midnights).
 */
export interface WindowSpec {
  readonly name: string;
  readonly limit: number;
  readonly seconds: number;
}

export interface WindowState {
  readonly name: string;
  readonly limit: number;
  /** Requests left in this window after this one; never below 0. */
  readonly remaining: number;
  /** When the window ends, in milliseconds since the epoch. */
  readonly resetAt: number;
  readonly seconds: number;
}

export interface ConsumeResult {
  /** True when the request was counted; false when a window was already full (nothing counted). */
  readonly allowed: boolean;
  readonly windows: readonly WindowState[];
  /**
   * When refused and a strike subject was given: how many refused requests that subject has sent
   * since its first refusal, counting this one, until the blocking windows reset.
   */
  readonly strikes: number;
  /**
   * True when a shared limiter could not be reached and this process's own memory answered: its
   * counts cover only the requests this process saw.
   */
  readonly fallback: boolean;
}

export interface ConsumeRequest {
  /** Whose quota this is, e.g. `account:42` or `address:203.0.113.9`. */
  readonly subject: string;
  readonly windows: readonly WindowSpec[];
  /** Who is struck when refused, e.g. `key:key_abc`. */
  readonly strikeSubject?: string;
  /** Only report the state; count nothing (answers to a banned key). */
  readonly peek?: boolean;
}

export interface RateLimiter {
  /**
   * Atomically: if every window has room, count the request in all of them; otherwise count
   * nothing and, with a strike subject, add a strike. Returns every window's state either way.
   */
  consume(request: ConsumeRequest, now: number): Promise<ConsumeResult>;
  /** Forget a subject's strikes (after a ban or its lifting). */
  clearStrikes(strikeSubject: string): Promise<void>;
  close(): Promise<void>;
}

export function windowStart(now: number, seconds: number): number {
  const size = seconds * 1000;
  return now - (now % size);
}
