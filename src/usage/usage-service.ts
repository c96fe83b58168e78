import type { Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import type { UsageStore } from '../domain/usage-counts.ts';
import type { UsageFlusher } from './usage-flusher.ts';
import { parseInstant } from './instant.ts';
import {
  bucketMsOf,
  bucketStart,
  DAY_MS,
  HOUR_MS,
  REFUSAL_OUTCOMES,
  type Granularity,
  type UsageOperation,
  type UsageOutcome,
} from '../domain/usage.ts';
import type { PendingCount } from './usage-tally.ts';

/** `[from, to)` in milliseconds, both on bucket boundaries. */
export interface UsageRange {
  readonly from: number;
  readonly to: number;
  readonly granularity: Granularity;
}

export interface UsagePoint {
  readonly at: number;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  readonly count: number;
}

export interface KeyCalls {
  readonly keyId: string;
  readonly calls: number;
  readonly lastCall: number;
}

export interface DeprecatedUsage {
  readonly operation: 'getPet';
  readonly sunset: number;
  readonly since: number;
  readonly calls: number;
  readonly lastCall: number | null;
  readonly keys: readonly KeyCalls[];
}

export interface DeprecatedCaller {
  readonly account: string;
  readonly keyId: string;
  readonly calls: number;
  readonly lastCall: number;
}

export interface AccountTotals {
  readonly account: string;
  readonly requests: number;
  readonly refusals: number;
}

export interface RawRange {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly granularity?: string | undefined;
}

/** The longest range one history request may span: 2,160 hourly points at most. */
export const MAX_RANGE_DAYS = 90;
/** How far back the deprecated calls are counted. */
export const DEPRECATED_WINDOW_DAYS = 30;

const DEFAULT_SPAN_MS: Readonly<Record<Granularity, number>> = { hour: DAY_MS, day: 30 * DAY_MS };

/** How many reads a view tries before it settles for one a flush ran across (it may then be off by that flush). */
const CONSISTENT_READ_TRIES = 3;

/**
 * What the usage history says, for the account holder (public API), the operator (admin API and
 * console) and the CLI alike. Every view adds this instance's counts that are not stored yet, so a
 * request shows at once here and within one flush interval on every other instance.
 */
export class UsageService {
  private readonly store: UsageStore;
  private readonly flusher: UsageFlusher;
  private readonly clock: Clock;
  private readonly sunset: number;

  constructor(store: UsageStore, flusher: UsageFlusher, clock: Clock, options: { readonly sunset: Date }) {
    this.store = store;
    this.flusher = flusher;
    this.clock = clock;
    this.sunset = options.sunset.getTime();
  }

  /** A history range from query parameters; ValidationError (invalid_query) names what is wrong. */
  parseRange(raw: RawRange): UsageRange {
    const granularity = raw.granularity ?? 'hour';
    if (granularity !== 'hour' && granularity !== 'day') {
      throw new ValidationError(
        'invalid_query',
        `granularity must be hour or day (got ${JSON.stringify(granularity)})`,
      );
    }
    const bucketMs = bucketMsOf(granularity);
    // Without `to`: through the end of the current hour or day, so the latest requests are in.
    const to = raw.to === undefined ? bucketStart(this.clock.now(), bucketMs) + bucketMs : parseInstant('to', raw.to);
    const from = raw.from === undefined ? to - DEFAULT_SPAN_MS[granularity] : parseInstant('from', raw.from);
    if (from >= to) {
      throw new ValidationError('invalid_query', `from must be before to (got from ${iso(from)}, to ${iso(to)})`);
    }
    // The bound holds for the range answered, widened to whole buckets: never more than 2,160 hours.
    const range: UsageRange = {
      from: bucketStart(from, bucketMs),
      to: bucketStart(to + bucketMs - 1, bucketMs),
      granularity,
    };
    if (range.to - range.from > MAX_RANGE_DAYS * DAY_MS) {
      const widened =
        range.from === from && range.to === to
          ? ''
          : ` once widened to whole ${granularity}s (${iso(range.from)} to ${iso(range.to)})`;
      throw new ValidationError(
        'invalid_query',
        `the range from ${iso(from)} to ${iso(to)} spans more than ${MAX_RANGE_DAYS} days${widened}; ` +
          `ask for ${MAX_RANGE_DAYS} days or less at a time`,
      );
    }
    return range;
  }

  /** Non-zero points, by time, operation and outcome; every account together when accountId is undefined. */
  async history(accountId: number | undefined, range: UsageRange): Promise<UsagePoint[]> {
    const bucketMs = bucketMsOf(range.granularity);
    const points = new Map<string, { at: number; operation: UsageOperation; outcome: UsageOutcome; count: number }>();
    const add = (at: number, operation: UsageOperation, outcome: UsageOutcome, count: number): void => {
      const id = `${at}\u0000${operation}\u0000${outcome}`;
      const point = points.get(id);
      if (point === undefined) points.set(id, { at, operation, outcome, count });
      else point.count += count;
    };
    const stored = await this.read(
      () => this.store.series({ accountId, from: range.from, to: range.to, bucketMs }),
      accountId,
      (count) => {
        if (count.hour < range.from || count.hour >= range.to) return;
        add(bucketStart(count.hour, bucketMs), count.operation, count.outcome, count.count);
      },
    );
    for (const bucket of stored) add(bucket.at, bucket.operation, bucket.outcome, bucket.count);
    return [...points.values()]
      .filter((point) => point.count > 0)
      .sort((a, b) => a.at - b.at || compare(a.operation, b.operation) || compare(a.outcome, b.outcome));
  }

  /** The account's calls of the deprecated getPet in the last 30 days, per key. */
  async deprecated(accountId: number): Promise<DeprecatedUsage> {
    const since = this.clock.now() - DEPRECATED_WINDOW_DAYS * DAY_MS;
    const keys = (await this.getPetCalls(accountId, since)).map(({ keyId, calls, lastCall }) => ({
      keyId,
      calls,
      lastCall,
    }));
    const calls = keys.reduce((sum, key) => sum + key.calls, 0);
    const lastCall = keys.length === 0 ? null : Math.max(...keys.map((key) => key.lastCall));
    return { operation: 'getPet', sunset: this.sunset, since, calls, lastCall, keys };
  }

  /** Every account and key that called getPet in the last 30 days: whom to tell before the sunset. */
  async deprecatedCallers(): Promise<{ readonly since: number; readonly sunset: number; callers: DeprecatedCaller[] }> {
    const since = this.clock.now() - DEPRECATED_WINDOW_DAYS * DAY_MS;
    const callers = (await this.getPetCalls(undefined, since)).map(({ account, keyId, calls, lastCall }) => ({
      account,
      keyId,
      calls,
      lastCall,
    }));
    return { since, sunset: this.sunset, callers };
  }

  /** The accounts with the most requests (every outcome) or refusals (429 and banned) in `[from, to)`. */
  async top(
    by: 'requests' | 'refusals',
    range: { readonly from: number; readonly to: number },
    limit: number,
  ): Promise<AccountTotals[]> {
    const totals = new Map<number, { account: string; requests: number; refusals: number }>();
    const add = (accountId: number, account: string, requests: number, refusals: number): void => {
      const total = totals.get(accountId);
      if (total === undefined) totals.set(accountId, { account, requests, refusals });
      else {
        total.requests += requests;
        total.refusals += refusals;
      }
    };
    // Every account's: an operator's view of them all.
    const stored = await this.read(
      () => this.store.totalsByAccount(range),
      undefined,
      (count) => {
        if (count.hour < range.from || count.hour >= range.to) return;
        add(
          count.accountId,
          count.accountName,
          count.count,
          REFUSAL_OUTCOMES.includes(count.outcome) ? count.count : 0,
        );
      },
    );
    for (const row of stored) add(row.accountId, row.accountName, row.requests, row.refusals);
    return [...totals.values()]
      .filter((total) => total[by] > 0)
      .sort((a, b) => b[by] - a[by] || compare(a.account, b.account))
      .slice(0, limit);
  }

  private async getPetCalls(
    accountId: number | undefined,
    since: number,
  ): Promise<{ account: string; keyId: string; calls: number; lastCall: number }[]> {
    const sinceHour = bucketStart(since, HOUR_MS);
    const byKey = new Map<string, { account: string; keyId: string; calls: number; lastCall: number }>();
    const add = (account: string, keyId: string, calls: number, lastCall: number): void => {
      const key = byKey.get(keyId);
      if (key === undefined) byKey.set(keyId, { account, keyId, calls, lastCall });
      else {
        key.calls += calls;
        key.lastCall = Math.max(key.lastCall, lastCall);
      }
    };
    const stored = await this.read(
      () => this.store.callsByKey({ operation: 'getPet', accountId, since: sinceHour }),
      accountId,
      (count) => {
        if (count.operation !== 'getPet' || count.hour < sinceHour) return;
        add(count.accountName, count.keyId, count.count, count.lastAt);
      },
    );
    for (const row of stored) add(row.accountName, row.keyId, row.calls, row.lastAt);
    return [...byKey.values()].sort(
      (a, b) => b.calls - a.calls || compare(a.account, b.account) || compare(a.keyId, b.keyId),
    );
  }

  /**
   * Storage and the counts not yet stored (of one account, or of every account when `accountId` is
   * undefined), as of one moment: a flush that starts or ends during the storage read moves counts
   * from one side to the other, so such a read is done again. Once storage is read, `visitPending`
   * sees the counts not yet stored before anything else runs; it reads them where they are, so a
   * view of one account costs what that account holds, not what the tally holds.
   */
  private async read<T>(
    fromStorage: () => Promise<T>,
    accountId: number | undefined,
    visitPending: (count: PendingCount) => void,
  ): Promise<T> {
    for (let tries = 1; ; tries += 1) {
      await this.flusher.settled();
      const epoch = this.flusher.epoch;
      const stored = await fromStorage();
      if (this.flusher.epoch === epoch || tries >= CONSISTENT_READ_TRIES) {
        this.flusher.visitPending(accountId, visitPending);
        return stored;
      }
    }
  }
}

const iso = (at: number): string => new Date(at).toISOString();

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
