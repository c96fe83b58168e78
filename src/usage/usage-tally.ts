import type { UsageCount } from '../storage/store.ts';
import { bucketStart, HOUR_MS, type UsageOperation, type UsageOutcome } from '../domain/usage.ts';

/** One answered request of a known key. */
export interface TalliedRequest {
  readonly accountId: number;
  readonly accountName: string;
  readonly keyId: string;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  /** When it was answered, in milliseconds since the epoch. */
  readonly at: number;
}

/** A count not yet stored, with its account's name for the views that show it before it is. */
export interface PendingCount extends UsageCount {
  readonly accountName: string;
}

interface Entry {
  accountId: number;
  accountName: string;
  keyId: string;
  operation: UsageOperation;
  outcome: UsageOutcome;
  hour: number;
  count: number;
  lastAt: number;
}

const entryId = (accountId: number, keyId: string, operation: string, outcome: string, hour: number): string =>
  `${accountId}\u0000${keyId}\u0000${operation}\u0000${outcome}\u0000${hour}`;

/** Default bound: at a few hundred bytes an entry, tens of megabytes at most. */
export const DEFAULT_TALLY_ENTRIES = 100_000;

/**
 * Requests counted in memory, by account, key, operation, outcome and UTC hour, until the flusher
 * stores them. Counting is one map lookup on the request path; nothing there waits or writes.
 *
 * Bounded: one entry per distinct (key, operation, outcome, hour), so it grows with the keys in use,
 * not with the requests. Only while storage refuses flushes can it fill up; past the bound a request
 * in a new combination goes uncounted (and `count` says so), while every existing entry keeps counting.
 */
export class UsageTally {
  private entries = new Map<string, Entry>();
  private readonly maxEntries: number;

  constructor(options: { readonly maxEntries?: number } = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_TALLY_ENTRIES;
  }

  /** False when the request could not be counted: the tally is full. */
  count(request: TalliedRequest): boolean {
    const hour = bucketStart(request.at, HOUR_MS);
    const id = entryId(request.accountId, request.keyId, request.operation, request.outcome, hour);
    const entry = this.entries.get(id);
    if (entry !== undefined) {
      entry.count += 1;
      if (request.at > entry.lastAt) entry.lastAt = request.at;
      return true;
    }
    if (this.entries.size >= this.maxEntries) return false;
    this.entries.set(id, {
      accountId: request.accountId,
      accountName: request.accountName,
      keyId: request.keyId,
      operation: request.operation,
      outcome: request.outcome,
      hour,
      count: 1,
      lastAt: request.at,
    });
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Takes every count out, for a flush; what comes in meanwhile starts a new tally. */
  drain(): PendingCount[] {
    const taken = [...this.entries.values()];
    this.entries = new Map();
    return taken;
  }

  /**
   * Puts back counts a flush could not store, merged with what came in meanwhile. Never refused for
   * the bound: they were counted once already, and losing them is what the tally exists to avoid.
   */
  restore(counts: readonly PendingCount[]): void {
    for (const count of counts) {
      const id = entryId(count.accountId, count.keyId, count.operation, count.outcome, count.hour);
      const entry = this.entries.get(id);
      if (entry === undefined) {
        this.entries.set(id, { ...count });
      } else {
        entry.count += count.count;
        entry.lastAt = Math.max(entry.lastAt, count.lastAt);
      }
    }
  }

  /** The counts now held, unchanged. */
  snapshot(): PendingCount[] {
    return [...this.entries.values()].map((entry) => ({ ...entry }));
  }
}
