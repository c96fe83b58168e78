import type { Clock } from '../clock.ts';
import type { BanStore, KeyPrincipal } from '../storage/store.ts';
import type { ConsumeRequest, ConsumeResult, RateLimiter, WindowSpec, WindowState } from './limiter.ts';
import { limitsFor, type PlanLimits } from './plans.ts';
import { policyField, rateLimitFields, secondsUntil, type RateLimitFields } from './rate-limit-headers.ts';

export type LimitVerdict =
  | { readonly kind: 'allow'; readonly fields: RateLimitFields }
  | {
      readonly kind: 'rate_limited' | 'key_banned';
      readonly fields: RateLimitFields;
      readonly retryAfterSeconds: number;
      readonly message: string;
    };

export type Refusal = Exclude<LimitVerdict, { kind: 'allow' }>;

/** Where an account and key stand, for GET /v1/usage; nothing was counted in the account's windows. */
export interface Standing {
  readonly windows: readonly WindowState[];
  /** The key's ban while it lasts. */
  readonly ban: { readonly until: number; readonly retryAfterSeconds: number } | null;
}

/** The verdict on a usage request: its own limit refused it, or the account's standing with its fields. */
export type UsageVerdict =
  { readonly kind: 'allow'; readonly fields: RateLimitFields; readonly standing: Standing } | Refusal;

export interface BanSettings {
  /** Refused requests after the first 429, before Retry-After, that are tolerated. */
  readonly threshold: number;
  readonly baseSeconds: number;
  readonly maxSeconds: number;
}

export interface RateLimitPolicyOptions {
  readonly anonymousPerMinute: number;
  /** Requests per minute per account to GET /v1/usage, counted apart from the account's windows. */
  readonly usagePerMinute: number;
  readonly ban: BanSettings;
  /** Called when this instance bans a key, so cached verdicts about it are dropped. */
  readonly onBan: (keyId: string) => void;
  readonly onRefused?: (reason: 'rate_limited' | 'key_banned') => void;
}

const DAY_MS = 86_400_000;

/** What a cached principal's requests consume, built once instead of per request. */
interface PreparedPrincipal {
  readonly counted: ConsumeRequest;
  readonly peeked: ConsumeRequest;
  readonly policy: string;
}

/** Where an account's requests are counted: its subject and its minute and day windows. */
export function accountQuota(
  accountId: number,
  limits: PlanLimits,
): { readonly subject: string; readonly windows: readonly WindowSpec[] } {
  return {
    subject: `account:${accountId}`,
    windows: [
      { name: 'minute', limit: limits.perMinute, seconds: 60 },
      { name: 'day', limit: limits.perDay, seconds: 86_400 },
    ],
  };
}

/**
 * Decides, per request, whether it may proceed: per-account minute and day windows for keys,
 * a per-address minute window for everything without a valid key, and temporary bans of keys that
 * keep sending after a 429. The counting itself is the limiter's single atomic operation.
 */
export class RateLimitPolicy {
  private readonly limiter: RateLimiter;
  private readonly bans: BanStore;
  private readonly clock: Clock;
  private readonly options: RateLimitPolicyOptions;
  private readonly anonymousWindows: readonly WindowSpec[];
  private readonly anonymousPolicy: string;
  private readonly usageWindows: readonly WindowSpec[];
  private readonly usagePolicy: string;
  private readonly preparedPrincipals = new WeakMap<KeyPrincipal, PreparedPrincipal>();

  constructor(limiter: RateLimiter, bans: BanStore, clock: Clock, options: RateLimitPolicyOptions) {
    this.limiter = limiter;
    this.bans = bans;
    this.clock = clock;
    this.options = options;
    this.anonymousWindows = [{ name: 'minute', limit: options.anonymousPerMinute, seconds: 60 }];
    this.anonymousPolicy = policyField(this.anonymousWindows);
    this.usageWindows = [{ name: 'minute', limit: options.usagePerMinute, seconds: 60 }];
    this.usagePolicy = policyField(this.usageWindows);
  }

  /**
   * A request for the account's standing: counted only in a per-account window of its own (under a
   * subject of its own, so it is exact across instances), never struck, and answered even while the
   * key is banned. The account's windows are only peeked at; their fields are what a counted request
   * would report, without its spending.
   */
  async forUsage(principal: KeyPrincipal): Promise<UsageVerdict> {
    const now = this.clock.now();
    const own = await this.limiter.consume(
      { subject: `usage:${principal.accountId}`, windows: this.usageWindows },
      now,
    );
    if (!own.allowed) return this.limited(own, this.usagePolicy, now, "GET /v1/usage's own limit, per account");
    const prepared = this.prepared(principal);
    const state = await this.limiter.consume(prepared.peeked, now);
    const fields = rateLimitFields(state.windows, now, prepared.policy);
    const until = principal.bannedUntil;
    if (until === null || until <= now)
      return { kind: 'allow', fields, standing: { windows: state.windows, ban: null } };
    const ban = { until, retryAfterSeconds: secondsUntil(until, now) };
    return { kind: 'allow', fields: bannedFields(fields, until), standing: { windows: state.windows, ban } };
  }

  /** Counts a request of a verified key against its account, or only reports the state while the key is banned. */
  async forKey(principal: KeyPrincipal): Promise<LimitVerdict> {
    const now = this.clock.now();
    const prepared = this.prepared(principal);
    const bannedUntil = principal.bannedUntil;
    if (bannedUntil !== null && bannedUntil > now) {
      const state = await this.limiter.consume(prepared.peeked, now);
      return this.banned(state, prepared.policy, bannedUntil, now);
    }
    const result = await this.limiter.consume(prepared.counted, now);
    // Allowed is the common answer, given here rather than through another async call.
    if (result.allowed) return { kind: 'allow', fields: rateLimitFields(result.windows, now, prepared.policy) };
    return this.refuse(principal, prepared.policy, result, now);
  }

  /** Counts a request without a valid key against its client address. */
  async forAddress(address: string): Promise<LimitVerdict> {
    const now = this.clock.now();
    const result = await this.limiter.consume({ subject: `address:${address}`, windows: this.anonymousWindows }, now);
    if (result.allowed) return { kind: 'allow', fields: rateLimitFields(result.windows, now, this.anonymousPolicy) };
    return this.limited(result, this.anonymousPolicy, now, 'requests without a valid API key, per client address');
  }

  /** Refusal of a request without a valid key when its address's window is already full; counts nothing. */
  async refusalForAddress(address: string): Promise<LimitVerdict | undefined> {
    const now = this.clock.now();
    const subject = `address:${address}`;
    const result = await this.limiter.consume({ subject, windows: this.anonymousWindows, peek: true }, now);
    if (result.windows.every((window) => window.remaining > 0)) return undefined;
    return this.limited(result, this.anonymousPolicy, now, 'requests without a valid API key, per client address');
  }

  /** A counted request of a verified key that its account's windows refused: limited, or banned. */
  private async refuse(
    principal: KeyPrincipal,
    policy: string,
    result: ConsumeResult,
    now: number,
  ): Promise<LimitVerdict> {
    // The first refusal is strike 1; `threshold` more are tolerated before Retry-After passes.
    // Strikes are counted atomically, so exactly one request (on any instance) sees the crossing
    // and writes the ban; the rest of a burst in flight meanwhile are refused as rate_limited.
    if (result.strikes === this.options.ban.threshold + 2) {
      const until = await this.ban(principal.keyId, now);
      await this.limiter.clearStrikes(`key:${principal.keyId}`);
      return this.banned(result, policy, until, now);
    }
    return this.limited(result, policy, now, `${principal.plan} plan`);
  }

  /** Subjects, windows and policy of a principal, built once per cached principal instead of per request. */
  private prepared(principal: KeyPrincipal): PreparedPrincipal {
    let prepared = this.preparedPrincipals.get(principal);
    if (!prepared) {
      const { subject, windows } = accountQuota(principal.accountId, limitsFor(principal));
      prepared = {
        counted: { subject, windows, strikeSubject: `key:${principal.keyId}` },
        peeked: { subject, windows, peek: true },
        policy: policyField(windows),
      };
      this.preparedPrincipals.set(principal, prepared);
    }
    return prepared;
  }

  private async ban(keyId: string, now: number): Promise<number> {
    const { baseSeconds, maxSeconds } = this.options.ban;
    const earlier = await this.bans.countSince(keyId, now - DAY_MS);
    const seconds = Math.min(maxSeconds, baseSeconds * 2 ** Math.min(earlier, 30));
    const until = now + seconds * 1000;
    await this.bans.ban(keyId, now, until);
    this.options.onBan(keyId);
    return until;
  }

  private limited(result: ConsumeResult, policy: string, now: number, scope: string): Refusal {
    const blocking = result.windows.filter((window) => window.remaining === 0);
    const blockedUntil = Math.max(...blocking.map((window) => window.resetAt));
    const retryAfterSeconds = secondsUntil(blockedUntil, now);
    const described = blocking.map((window) => `${window.limit} per ${window.name}`).join(' and ');
    this.options.onRefused?.('rate_limited');
    return {
      kind: 'rate_limited',
      fields: rateLimitFields(result.windows, now, policy),
      retryAfterSeconds,
      message: `rate limit exceeded (${described}, ${scope}); retry after ${retryAfterSeconds} s`,
    };
  }

  private banned(result: ConsumeResult, policy: string, until: number, now: number): Refusal {
    const fields = rateLimitFields(result.windows, now, policy);
    const retryAfterSeconds = secondsUntil(until, now);
    this.options.onRefused?.('key_banned');
    return {
      kind: 'key_banned',
      fields: bannedFields(fields, until),
      retryAfterSeconds,
      message:
        `this API key is banned until ${new Date(until).toISOString()} for repeated requests after a 429; ` +
        `retry after ${retryAfterSeconds} s`,
    };
  }
}

/** While a key is banned, its X-RateLimit fields say nothing is left until the ban ends. */
function bannedFields(fields: RateLimitFields, until: number): RateLimitFields {
  return { ...fields, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(until / 1000)) };
}
