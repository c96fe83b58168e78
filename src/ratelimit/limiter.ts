/**
 * The limiter seam: one atomic operation per request. Implementations: memory-limiter.ts (one
 * instance) and redis-limiter.ts (shared by every instance). Windows are fixed and aligned to UTC:
 * a window of `seconds` starts at a multiple of `seconds` since the epoch (minutes, midnights).
 *
 * Bans live here too, beside the strikes that lead to them: the step that counts the strike which
 * crosses the threshold also begins the ban, so every later request of that strike subject, on
 * every instance sharing the limiter, is answered as banned at once.
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
  /**
   * The strike subject's ban, while one lasts: then the request was refused and counted nowhere
   * (a peek only reports it). `began` is true for the one request whose strike began it.
   */
  readonly ban: Ban | null;
}

export interface Ban {
  /** When the ban ends, in milliseconds since the epoch. */
  readonly until: number;
  readonly began: boolean;
}

/** When a strike subject is banned, and for how long. */
export interface BanRule {
  /** The strike that begins the ban (the first refusal is strike 1). */
  readonly atStrike: number;
  readonly baseMs: number;
  /** The doubling per earlier ban (see BAN_REPEAT_MS) stops here. */
  readonly maxMs: number;
}

/** A ban that begins within this time of the previous one's start lasts twice as long, up to the rule's maximum. */
export const BAN_REPEAT_MS = 86_400_000;

export interface ConsumeRequest {
  /** Whose quota this is, e.g. `account:42` or `address:203.0.113.9`. */
  readonly subject: string;
  readonly windows: readonly WindowSpec[];
  /**
   * Who is struck when refused, and whose ban is reported, e.g. `key:key_abc`. A strike subject
   * always comes with the same `subject` (a key with its account): a shared limiter keeps its
   * strikes and ban beside that subject's counters.
   */
  readonly strikeSubject?: string;
  /** When the strike subject's strikes begin a ban; without it, strikes only count. */
  readonly ban?: BanRule;
  /** Only report the state (the strike subject's ban included); count nothing. */
  readonly peek?: boolean;
}

/** Whose ban: the strike subject, and the quota subject whose requests it was struck beside. */
export interface BanSubject {
  readonly subject: string;
  readonly strikeSubject: string;
}

export interface RateLimiter {
  /**
   * Atomically: while the strike subject is banned, count nothing and report the ban. Otherwise,
   * if every window has room, count the request in all of them; if not, count nothing and, with a
   * strike subject, add a strike, and begin a ban when the rule says so (forgetting the strikes).
   * Returns every window's state either way.
   */
  consume(request: ConsumeRequest, now: number): Promise<ConsumeResult>;
  /**
   * Ends the subject's ban (only the one ending at `until`, when given) and forgets its strikes;
   * the earlier bans still count toward the next one's length. True when a ban was in force.
   */
  liftBan(ban: BanSubject, now: number, until?: number): Promise<boolean>;
  close(): Promise<void>;
}

export function windowStart(now: number, seconds: number): number {
  const size = seconds * 1000;
  return now - (now % size);
}
