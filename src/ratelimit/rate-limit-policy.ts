import type { Clock } from '../clock.ts';
import type { BanStore } from '../domain/bans.ts';
import type { KeyPrincipal } from '../domain/principal.ts';
import type {
  BanRule,
  BanSubject,
  ConsumeRequest,
  ConsumeResult,
  RateLimiter,
  WindowSpec,
  WindowState,
} from './limiter.ts';
import { accountSubjectOf, type AccountQuotas } from './account-quotas.ts';
import { limitedNetworkOf } from '../net/client-address.ts';
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
  /** Each account's windows, derived from the limit windows at start-up. */
  readonly quotas: AccountQuotas;
  readonly anonymousPerMinute: number;
  /** The IPv6 networks requests without a valid key are counted per (IPV6_LIMIT_PREFIX); default 64. */
  readonly ipv6LimitPrefix?: number;
  /** Requests per minute per account to GET /v1/usage, counted apart from the account's windows. */
  readonly usagePerMinute: number;
  readonly ban: BanSettings;
  /** Called when a ban this instance knew of was lifted: what was kept about the key must go. */
  readonly onBanLifted: (keyId: string) => void;
  /** Called when a ban could not be written to storage; it holds in the limiter all the same. */
  readonly onBanNotRecorded?: (keyId: string, error: Error) => void;
  readonly onRefused?: (reason: 'rate_limited' | 'key_banned') => void;
  /** How often storage is asked about liftings while this instance knows of bans; default 1000 ms. */
  readonly liftCheckEveryMs?: number;
}

/** Most bans one look at storage asks about; more wait for the next look. */
const LIFT_CHECK_BATCH = 500;

/** A key whose ban can be lifted: its id, and the account its requests count against. */
export interface BannableKey {
  readonly keyId: string;
  readonly accountId: number;
}

/** A ban this instance has answered with: its end, and whose quota it sits beside. */
interface HeldBan {
  readonly until: number;
  readonly accountId: number;
}

/** What a cached principal's requests consume, built once instead of per request. */
interface PreparedPrincipal {
  readonly counted: ConsumeRequest;
  readonly peeked: ConsumeRequest;
  readonly policy: string;
}

/**
 * Decides, per request, whether it may proceed: per-account windows for keys (one per limit window),
 * a per-address minute window for everything without a valid key, and temporary bans of keys that
 * keep sending after a 429. The counting itself is the limiter's single atomic operation, and so is
 * the beginning of a ban: the limiter answers every later request of the key as banned, on every
 * instance that shares it. Storage keeps a record of each ban (history, listing, lifting by an
 * operator); a banned key's requests never wait for it.
 */
export class RateLimitPolicy {
  private readonly limiter: RateLimiter;
  private readonly bans: BanStore;
  private readonly clock: Clock;
  private readonly options: RateLimitPolicyOptions;
  private readonly banRule: BanRule;
  /** Bans this instance has answered with, by key id. Storage is asked which were lifted. */
  private readonly held = new Map<string, HeldBan>();
  private liftCheck: NodeJS.Timeout | undefined;
  private checkingLifts = false;
  private readonly anonymousWindows: readonly WindowSpec[];
  private readonly anonymousPolicy: string;
  private readonly ipv6LimitPrefix: number;
  private readonly usageWindows: readonly WindowSpec[];
  private readonly usagePolicy: string;
  private readonly preparedPrincipals = new WeakMap<KeyPrincipal, PreparedPrincipal>();

  constructor(limiter: RateLimiter, bans: BanStore, clock: Clock, options: RateLimitPolicyOptions) {
    this.limiter = limiter;
    this.bans = bans;
    this.clock = clock;
    this.options = options;
    this.banRule = {
      atStrike: options.ban.threshold + 2,
      baseMs: options.ban.baseSeconds * 1000,
      maxMs: options.ban.maxSeconds * 1000,
    };
    this.anonymousWindows = [{ name: 'minute', limit: options.anonymousPerMinute, seconds: 60 }];
    this.anonymousPolicy = policyField(this.anonymousWindows);
    this.ipv6LimitPrefix = options.ipv6LimitPrefix ?? 64;
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
    const until = Math.max(this.knownBan(principal), state.ban?.until ?? 0);
    if (until <= now) return { kind: 'allow', fields, standing: { windows: state.windows, ban: null } };
    this.hold(principal, until);
    const ban = { until, retryAfterSeconds: secondsUntil(until, now) };
    return { kind: 'allow', fields: bannedFields(fields, until), standing: { windows: state.windows, ban } };
  }

  /** Counts a request of a verified key against its account, or only reports the state while the key is banned. */
  async forKey(principal: KeyPrincipal): Promise<LimitVerdict> {
    const now = this.clock.now();
    const prepared = this.prepared(principal);
    // A ban the limiter may not know: recorded in storage before this process started, or held
    // by a shared limiter that is unreachable now.
    const known = this.knownBan(principal);
    if (known > now) {
      const state = await this.limiter.consume(prepared.peeked, now);
      return this.banned(principal, state, prepared.policy, Math.max(known, state.ban?.until ?? 0), now);
    }
    const result = await this.limiter.consume(prepared.counted, now);
    // Allowed is the common answer, given here rather than through another async call.
    if (result.allowed) return { kind: 'allow', fields: rateLimitFields(result.windows, now, prepared.policy) };
    const ban = result.ban;
    if (ban === null) return this.limited(result, prepared.policy, now, `${principal.plan} plan`);
    // Exactly one request, on whichever instance, began the ban: it records it.
    if (ban.began) await this.record(principal.keyId, now, ban.until);
    return this.banned(principal, result, prepared.policy, ban.until, now);
  }

  /**
   * Ends a key's ban in the limiter and forgets what this instance kept about it (an operator's
   * lifting, after storage's). True when the limiter held a ban in force.
   */
  async liftBan(key: BannableKey): Promise<boolean> {
    const lifted = await this.limiter.liftBan(banSubjectOf(key), this.clock.now());
    this.held.delete(key.keyId);
    this.options.onBanLifted(key.keyId);
    return lifted;
  }

  /**
   * When the key's ban, as this instance knows it, ends (0: no ban known). Until then its verdict
   * may be kept without asking storage again.
   */
  banEnd(keyId: string): number {
    return this.held.get(keyId)?.until ?? 0;
  }

  close(): void {
    this.stopLiftCheck();
  }

  /** Counts a request without a valid key against its client address (an IPv6 one: its network). */
  async forAddress(address: string): Promise<LimitVerdict> {
    const now = this.clock.now();
    const counted = limitedNetworkOf(address, this.ipv6LimitPrefix);
    const result = await this.limiter.consume({ subject: `address:${counted}`, windows: this.anonymousWindows }, now);
    if (result.allowed) return { kind: 'allow', fields: rateLimitFields(result.windows, now, this.anonymousPolicy) };
    return this.limited(result, this.anonymousPolicy, now, anonymousScope(counted));
  }

  /** Refusal of a request without a valid key when its address's window is already full; counts nothing. */
  async refusalForAddress(address: string): Promise<LimitVerdict | undefined> {
    const now = this.clock.now();
    const counted = limitedNetworkOf(address, this.ipv6LimitPrefix);
    const subject = `address:${counted}`;
    const result = await this.limiter.consume({ subject, windows: this.anonymousWindows, peek: true }, now);
    if (result.windows.every((window) => window.remaining > 0)) return undefined;
    return this.limited(result, this.anonymousPolicy, now, anonymousScope(counted));
  }

  /** Subjects, windows and policy of a principal, built once per cached principal instead of per request. */
  private prepared(principal: KeyPrincipal): PreparedPrincipal {
    let prepared = this.preparedPrincipals.get(principal);
    if (!prepared) {
      const { subject, windows, policy } = this.options.quotas.quotaOf(principal.accountId, principal);
      // The first refusal is strike 1; `threshold` more are tolerated before Retry-After passes.
      const { strikeSubject } = banSubjectOf(principal);
      prepared = {
        counted: { subject, windows, strikeSubject, ban: this.banRule },
        peeked: { subject, windows, strikeSubject, peek: true },
        policy,
      };
      this.preparedPrincipals.set(principal, prepared);
    }
    return prepared;
  }

  /** The end of the key's ban as storage said when the key was read, or as this instance last answered. */
  private knownBan(principal: KeyPrincipal): number {
    const stored = principal.bannedUntil ?? 0;
    if (this.held.size === 0) return stored;
    const held = this.held.get(principal.keyId)?.until ?? 0;
    return held > stored ? held : stored;
  }

  /** Writes the ban to storage. The limiter holds it whatever happens here, so a failure is only reported. */
  private async record(keyId: string, startedAt: number, until: number): Promise<void> {
    try {
      await this.bans.ban(keyId, startedAt, until);
    } catch (error) {
      this.options.onBanNotRecorded?.(keyId, error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Keeps the ban in mind until it ends or storage says it was lifted. */
  private hold(key: BannableKey, until: number): void {
    if (this.held.get(key.keyId)?.until === until) return;
    this.held.set(key.keyId, { until, accountId: key.accountId });
    if (this.liftCheck === undefined) {
      this.liftCheck = setInterval(() => void this.checkLifts(), this.options.liftCheckEveryMs ?? 1000);
      this.liftCheck.unref();
    }
  }

  /**
   * One storage query for the bans this instance holds: those an operator lifted (maybe from
   * another process) end here too, and in the limiter. Storage unreachable: every ban holds.
   */
  private async checkLifts(): Promise<void> {
    if (this.checkingLifts) return;
    const now = this.clock.now();
    for (const [keyId, ban] of this.held) if (ban.until <= now) this.held.delete(keyId);
    if (this.held.size === 0) {
      this.stopLiftCheck();
      return;
    }
    this.checkingLifts = true;
    try {
      const asked: (HeldBan & BannableKey)[] = [];
      for (const [keyId, ban] of this.held) {
        if (asked.length === LIFT_CHECK_BATCH) break;
        asked.push({ keyId, ...ban });
      }
      // The bans asked about go to the back of the line, so that every ban is asked about in turn.
      for (const { keyId, ...ban } of asked) {
        this.held.delete(keyId);
        this.held.set(keyId, ban);
      }
      const lifted = new Set(await this.bans.liftedAmong(asked));
      for (const ban of asked) if (lifted.has(ban.keyId)) await this.endLifted(ban);
    } catch {
      // Storage is unreachable: nothing is known to be lifted.
    } finally {
      this.checkingLifts = false;
    }
  }

  private async endLifted(ban: HeldBan & BannableKey): Promise<void> {
    // A ban that began since is not the one lifted.
    if (this.held.get(ban.keyId)?.until !== ban.until) return;
    this.held.delete(ban.keyId);
    this.options.onBanLifted(ban.keyId);
    await this.limiter.liftBan(banSubjectOf(ban), this.clock.now(), ban.until);
  }

  private stopLiftCheck(): void {
    clearInterval(this.liftCheck);
    this.liftCheck = undefined;
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

  private banned(key: BannableKey, result: ConsumeResult, policy: string, until: number, now: number): Refusal {
    this.hold(key, until);
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

/**
 * A key's strikes and ban are kept beside its account's counters (one shard of a Redis Cluster),
 * so that one request is one atomic step.
 */
function banSubjectOf(key: BannableKey): BanSubject {
  return { subject: accountSubjectOf(key.accountId), strikeSubject: `key:${key.keyId}` };
}

/** What a refusal of requests without a valid key says they are counted per: an address, or an IPv6 network. */
function anonymousScope(counted: string): string {
  const slash = counted.lastIndexOf('/');
  const per = slash < 0 ? 'client address' : `client network (IPv6 ${counted.slice(slash)})`;
  return `requests without a valid API key, per ${per}`;
}

/** While a key is banned, its X-RateLimit fields say nothing is left until the ban ends. */
function bannedFields(fields: RateLimitFields, until: number): RateLimitFields {
  return { ...fields, 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(until / 1000)) };
}
