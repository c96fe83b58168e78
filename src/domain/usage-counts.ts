/** The usage history as storage keeps it: hourly counts, and the part of the storage seam that adds and reads them. */
import type { BackgroundWrite } from './background-write.ts';
import type { UsageOperation, UsageOutcome } from './usage.ts';

/** Requests of one key under one operation and outcome in one UTC hour. */
export interface UsageCount {
  readonly accountId: number;
  readonly keyId: string;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  /** Start of the UTC hour, in milliseconds since the epoch. */
  readonly hour: number;
  readonly count: number;
  /** The latest request counted. */
  readonly lastAt: number;
}

/** Stored requests summed per bucket (an hour or a day) of `[from, to)`. */
export interface UsageSeriesQuery {
  /** Undefined: every account together. */
  readonly accountId: number | undefined;
  readonly from: number;
  readonly to: number;
  readonly bucketMs: number;
}

export interface UsageBucket {
  readonly at: number;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  readonly count: number;
}

export interface KeyCallsQuery {
  readonly operation: UsageOperation;
  /** Undefined: every account. */
  readonly accountId: number | undefined;
  /** Hours starting at or after this. */
  readonly since: number;
}

export interface StoredKeyCalls {
  readonly accountId: number;
  readonly accountName: string;
  readonly keyId: string;
  readonly calls: number;
  readonly lastAt: number;
}

export interface StoredAccountTotals {
  readonly accountId: number;
  readonly accountName: string;
  readonly requests: number;
  readonly refusals: number;
}

/** The usage history: hourly counts that every instance adds to. */
export interface UsageStore {
  /**
   * Adds the counts to the stored ones (an additive upsert), all in one transaction, as a background
   * write (BackgroundWrite): false, having written nothing, when storage was busy.
   */
  add(counts: readonly UsageCount[], mode: BackgroundWrite): Promise<boolean>;
  series(query: UsageSeriesQuery): Promise<UsageBucket[]>;
  /** Calls per key of one operation since an hour. */
  callsByKey(query: KeyCallsQuery): Promise<StoredKeyCalls[]>;
  /** Requests and refusals per account in `[from, to)`. */
  totalsByAccount(range: { readonly from: number; readonly to: number }): Promise<StoredAccountTotals[]>;
  /** Deletes the hours before `before`, as a background write; how many rows went, or false when busy. */
  purge(before: number): Promise<number | false>;
}
