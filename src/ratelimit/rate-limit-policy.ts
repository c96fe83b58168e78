import type { Clock } from '../clock.ts';
import type { BanStore, KeyPrincipal } from '../storage/store.ts';
import type { ConsumeRequest, ConsumeResult, RateLimiter, WindowSpec } from './limiter.ts';
import { limitsFor } from './plans.ts';
import { policyField, rateLimitFields, secondsUntil, type RateLimitFields } from './rate-limit-headers.ts';

export type LimitVerdict =
  | { readonly kind: 'allow'; readonly fields: RateLimitFields }
  | {
      readonly kind: 'rate_limited' | 'key_banned';
      readonly fields: RateLimitFields;
      readonly retryAfterSeconds: number;
      readonly message: string;
    };

export interface BanSettings {
  /** Refused requests after the first 429, before Retry-After, that are tolerated. */
  readonly threshold: number;
  readonly baseSeconds: number;
  readonly maxSeconds: number;
}

export interface RateLimitPolicyOptions {
  readonly anonymousPerMinute: number;
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
  private readonly preparedPrincipals = new WeakMap<KeyPrincipal, PreparedPrincipal>();

  constructor(limiter: RateLimiter, bans: BanStore, clock: Clock, options: RateLimitPolicyOptions) {
    this.limiter = limiter;
    this.bans = bans;
    this.clock = clock;
    this.options = options;
    this.anonymousWindows = [{ name: 'minute', limit: options.anonymousPerMinute, seconds: 60 }];
    this.anonymousPolicy = policyField(this.anonymousWindows);
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
    return this.judge(principal, prepared.policy, result, now);
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

  private async judge(
    principal: KeyPrincipal,
    policy: string,
    result: ConsumeResult,
    now: number,
  ): Promise<LimitVerdict> {
    if (result.allowed) return { kind: 'allow', fields: rateLimitFields(result.windows, now, policy) };
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
      const limits = limitsFor(principal);
      const subject = `account:${principal.accountId}`;
      const windows: readonly WindowSpec[] = [
        { name: 'minute', limit: limits.perMinute, seconds: 60 },
        { name: 'day', limit: limits.perDay, seconds: 86_400 },
      ];
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

  private limited(result: ConsumeResult, policy: string, now: number, scope: string): LimitVerdict {
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

  private banned(result: ConsumeResult, policy: string, until: number, now: number): LimitVerdict {
    const fields = rateLimitFields(result.windows, now, policy);
    const retryAfterSeconds = secondsUntil(until, now);
    this.options.onRefused?.('key_banned');
    return {
      kind: 'key_banned',
      fields: { ...fields, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(until / 1000)) },
      retryAfterSeconds,
      message:
        `this API key is banned until ${new Date(until).toISOString()} for repeated requests after a 429; ` +
        `retry after ${retryAfterSeconds} s`,
    };
  }
}
