import type { UsageCount } from '../domain/usage-counts.ts';
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

/** Within one account's entries: the rest of what makes an entry. */
const entryId = (keyId: string, operation: string, outcome: string, hour: number): string =>
  `${keyId}\u0000${operation}\u0000${outcome}\u0000${hour}`;

const NONE: readonly PendingCount[] = [];

/**
 * Counts by account, then by key, operation, outcome and hour. Indexed by account so that whatever
 * concerns one account (its usage views, which its own requests ask for) touches that account's
 * entries only, however many the other accounts hold.
 */
export class TallyCounts {
  private readonly accounts = new Map<number, Map<string, Entry>>();
  private entries = 0;

  /** Counts made of counts taken out before (a flush's, to put back): each becomes an entry again. */
  static from(counts: readonly PendingCount[]): TallyCounts {
    const made = new TallyCounts();
    for (const count of counts) {
      const entries = made.accounts.get(count.accountId) ?? made.accountEntries(count.accountId);
      const id = entryId(count.keyId, count.operation, count.outcome, count.hour);
      const entry = entries.get(id);
      if (entry === undefined) {
        entries.set(id, { ...count });
        made.entries += 1;
      } else {
        entry.count += count.count;
        entry.lastAt = Math.max(entry.lastAt, count.lastAt);
      }
    }
    return made;
  }

  get size(): number {
    return this.entries;
  }

  /** Counts one request; false when it is a new combination and `bound` entries are held already. */
  add(request: TalliedRequest, bound: number): boolean {
    const hour = bucketStart(request.at, HOUR_MS);
    const id = entryId(request.keyId, request.operation, request.outcome, hour);
    const account = this.accounts.get(request.accountId);
    const entry = account?.get(id);
    if (entry !== undefined) {
      entry.count += 1;
      if (request.at > entry.lastAt) entry.lastAt = request.at;
      return true;
    }
    if (this.entries >= bound) return false;
    const entries = account ?? this.accountEntries(request.accountId);
    entries.set(id, {
      accountId: request.accountId,
      accountName: request.accountName,
      keyId: request.keyId,
      operation: request.operation,
      outcome: request.outcome,
      hour,
      count: 1,
      lastAt: request.at,
    });
    this.entries += 1;
    return true;
  }

  /**
   * Adds `other`'s counts to these; `other` must not be used afterwards. An account these do not
   * hold takes `other`'s entries as they are, so putting back a failed flush costs little more than
   * the accounts both hold.
   */
  absorb(other: TallyCounts): void {
    for (const [accountId, theirs] of other.accounts) {
      const ours = this.accounts.get(accountId);
      if (ours === undefined) {
        this.accounts.set(accountId, theirs);
        this.entries += theirs.size;
        continue;
      }
      for (const [id, count] of theirs) {
        const entry = ours.get(id);
        if (entry === undefined) {
          ours.set(id, count);
          this.entries += 1;
        } else {
          entry.count += count.count;
          entry.lastAt = Math.max(entry.lastAt, count.lastAt);
        }
      }
    }
  }

  /** One account's counts, live: read them at once, before anything else can count. */
  of(accountId: number): Iterable<PendingCount> {
    return this.accounts.get(accountId)?.values() ?? NONE;
  }

  /** Every account's counts, live, as `of`. */
  *all(): Iterable<PendingCount> {
    for (const entries of this.accounts.values()) yield* entries.values();
  }

  /** Every count, for a flush to store. */
  list(): PendingCount[] {
    return [...this.all()];
  }

  private accountEntries(accountId: number): Map<string, Entry> {
    const entries = new Map<string, Entry>();
    this.accounts.set(accountId, entries);
    return entries;
  }
}

/**
 * Default bound: 500 to 800 bytes an entry, so 55 MB of heap when full, 76 MB when every entry is
 * of an account of its own (each account's map costs about 180 bytes; measured on Node 24).
 */
export const DEFAULT_TALLY_ENTRIES = 100_000;

/**
 * Requests counted in memory, by account, key, operation, outcome and UTC hour, until the flusher
 * stores them. Counting is two map lookups on the request path; nothing there waits or writes.
 *
 * Bounded: one entry per distinct (key, operation, outcome, hour), so it grows with the keys in use,
 * not with the requests. Only while storage refuses flushes can it fill up; past the bound a request
 * in a new combination goes uncounted (and `count` says so), while every existing entry keeps counting.
 */
export class UsageTally {
  private counts = new TallyCounts();
  private readonly maxEntries: number;

  constructor(options: { readonly maxEntries?: number } = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_TALLY_ENTRIES;
  }

  /** False when the request could not be counted: the tally is full. */
  count(request: TalliedRequest): boolean {
    return this.counts.add(request, this.maxEntries);
  }

  get size(): number {
    return this.counts.size;
  }

  /** Takes every count out, for a flush; what comes in meanwhile starts a new tally. */
  drain(): TallyCounts {
    const taken = this.counts;
    this.counts = new TallyCounts();
    return taken;
  }

  /**
   * Puts back counts a flush could not store, merged with what came in meanwhile. Never refused for
   * the bound: they were counted once already, and losing them is what the tally exists to avoid.
   */
  restore(counts: TallyCounts): void {
    counts.absorb(this.counts);
    this.counts = counts;
  }

  /** One account's counts now held, live (TallyCounts.of). */
  of(accountId: number): Iterable<PendingCount> {
    return this.counts.of(accountId);
  }

  /** Every count now held, live. */
  all(): Iterable<PendingCount> {
    return this.counts.all();
  }
}
