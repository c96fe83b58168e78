import type { Clock } from '../clock.ts';
import type { BackgroundWrite } from '../domain/background-write.ts';
import type { UsageStore } from '../domain/usage-counts.ts';
import { bucketStart, DAY_MS, HOUR_MS } from '../domain/usage.ts';
import { TallyCounts, type PendingCount, type UsageTally } from './usage-tally.ts';

export type FlushResult = 'written' | 'skipped' | 'failed';

export interface UsageFlusherOptions {
  readonly intervalMs: number;
  readonly retentionDays: number;
  /** Each flush's result and how many rows it stored (metrics); a flush cut short may have stored some. */
  readonly onFlush?: (result: FlushResult, rows: number) => void;
  /** A flush that failed; its counts are kept for the next one. */
  readonly onFailure?: (error: Error) => void;
  /**
   * What else is kept as long as the history (the audit trail): deleted before the same cutoff, by
   * the same hourly purge; false when storage was busy.
   */
  readonly purgeAlso?: (before: number) => Promise<number | false>;
}

/** Flushes in a row that may find storage busy before one waits for it, as a request would. */
const SKIPS_BEFORE_WAITING = 3;

/** Rows per transaction of a flush: PostgreSQL stores 10,000 in about 0.3 s, SQLite in about 0.08 s. */
const ROWS_PER_WRITE = 10_000;

/** How often expired hours are purged. */
const PURGE_INTERVAL_MS = HOUR_MS;

/**
 * Moves the tally into storage off the request path: every interval, and a last time at shutdown.
 * A flush takes the counts out of the tally; if storage does not take them, they go back, merged
 * with what came in meanwhile, so a failure delays counts and never loses or doubles them.
 *
 * A flush is a background write: it is tried only when storage is free (store.ts, BackgroundWrite),
 * and after a few busy intervals in a row it waits for storage as a request does, so that a busy
 * store delays the history by a few intervals at most.
 */
export class UsageFlusher {
  private readonly tally: UsageTally;
  private readonly store: UsageStore;
  private readonly clock: Clock;
  private readonly options: UsageFlusherOptions;
  private readonly timers: NodeJS.Timeout[] = [];
  private inFlight: { readonly counts: TallyCounts; readonly done: Promise<FlushResult> } | undefined;
  private skipsInARow = 0;
  private flushes = 0;

  constructor(tally: UsageTally, store: UsageStore, clock: Clock, options: UsageFlusherOptions) {
    this.tally = tally;
    this.store = store;
    this.clock = clock;
    this.options = options;
  }

  /** Starts the interval flushes and the hourly purge. */
  start(): void {
    const flush = setInterval(() => void this.flush(), this.options.intervalMs);
    const purge = setInterval(() => void this.purgeExpired().catch(() => undefined), PURGE_INTERVAL_MS);
    flush.unref();
    purge.unref();
    this.timers.push(flush, purge);
  }

  /**
   * Stores what the tally holds. One flush at a time: a call during a flush waits for it and then
   * flushes what came in meanwhile.
   */
  async flush(mode?: BackgroundWrite): Promise<FlushResult> {
    while (this.inFlight !== undefined) await this.inFlight.done;
    const counts = this.tally.drain();
    if (counts.size === 0) return 'written';
    const write = mode ?? (this.skipsInARow >= SKIPS_BEFORE_WAITING ? 'waiting' : 'if-idle');
    const done = this.write(counts, write);
    this.inFlight = { counts, done };
    this.flushes += 1;
    try {
      return await done;
    } finally {
      this.inFlight = undefined;
      this.flushes += 1;
    }
  }

  /**
   * Stores the counts a few thousand rows per transaction, so that a full tally (100,000 entries,
   * seconds of work for PostgreSQL) is stored in writes that each end well within the storage
   * timeout, and a SQLite writer is held for a short while at a time. What a write did not store is
   * put back, and only that: the writes before it are stored for good.
   */
  private async write(counts: TallyCounts, mode: BackgroundWrite): Promise<FlushResult> {
    const rows = counts.list();
    let stored = 0;
    let result: FlushResult = 'written';
    while (stored < rows.length) {
      const batch = rows.slice(stored, stored + ROWS_PER_WRITE);
      try {
        if (!(await this.store.add(batch, mode))) {
          result = 'skipped';
          break;
        }
      } catch (error) {
        result = 'failed';
        this.options.onFailure?.(error instanceof Error ? error : new Error(String(error)));
        break;
      }
      stored += batch.length;
      // Stored, and still among the counts of the flush under way: a reader must read again.
      this.flushes += 1;
    }
    if (result === 'written') {
      this.skipsInARow = 0;
    } else {
      this.skipsInARow += 1;
      this.tally.restore(stored === 0 ? counts : TallyCounts.from(rows.slice(stored)));
    }
    this.options.onFlush?.(result, stored);
    return result;
  }

  /**
   * Visits the counts not yet stored, the tally's and those of a flush under way: one account's, or
   * every account's when `accountId` is undefined. Reading one account's costs what that account
   * holds. The counts are live: `visit` must only read them, and is called before this returns.
   */
  visitPending(accountId: number | undefined, visit: (count: PendingCount) => void): void {
    const inFlight = this.inFlight?.counts;
    const sources = inFlight === undefined ? [this.tally] : [this.tally, inFlight];
    for (const source of sources)
      for (const count of accountId === undefined ? source.all() : source.of(accountId)) visit(count);
  }

  /**
   * Settles once the flush under way, if any, has ended. With `epoch`, which changes whenever a
   * flush starts, stores a batch or ends, a reader that also reads storage can tell whether a flush moved counts
   * between the two while it read (UsageService), and read again rather than miss or double them.
   */
  settled(): Promise<unknown> {
    return this.inFlight?.done ?? Promise.resolve();
  }

  get epoch(): number {
    return this.flushes;
  }

  /**
   * Deletes the hours older than the retention, then what `purgeAlso` keeps as long; the hours
   * deleted, or false when storage was busy for either (tried again next hour).
   */
  async purgeExpired(): Promise<number | false> {
    const cutoff = bucketStart(this.clock.now() - this.options.retentionDays * DAY_MS, HOUR_MS);
    const hours = await this.store.purge(cutoff);
    // One after the other: on SQLite two background writes at once would find each other busy.
    const others = (await this.options.purgeAlso?.(cutoff)) ?? 0;
    return others === false ? false : hours;
  }

  /** Stops the timers and stores what is left, waiting for storage as a request would. */
  async close(): Promise<FlushResult> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
    return this.flush('waiting');
  }
}
