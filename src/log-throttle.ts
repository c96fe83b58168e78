/** Default least time between two lines about the same ongoing failure. */
export const LOG_THROTTLE_INTERVAL_MS = 10_000;

export interface LogThrottleOptions {
  /** Least time between two admitted occurrences; default 10 s. */
  readonly intervalMs?: number;
  /** Monotonic milliseconds; injectable so tests control time. */
  readonly now?: () => number;
}

/** An occurrence worth a log line, and how many were kept quiet since the previous one. */
export interface Admitted {
  readonly suppressed: number;
}

/**
 * One log line per interval for a failure that repeats on every request (an outage), instead of
 * one per request: during an outage per-request lines flood the log store exactly when it matters.
 */
export class LogThrottle {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(options: LogThrottleOptions = {}) {
    this.intervalMs = options.intervalMs ?? LOG_THROTTLE_INTERVAL_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /** Counts an occurrence: admitted (log it, with the count kept quiet) or undefined (stay quiet). */
  take(): Admitted | undefined {
    const at = this.now();
    if (at - this.lastAt < this.intervalMs) {
      this.suppressed += 1;
      return undefined;
    }
    const admitted = { suppressed: this.suppressed };
    this.lastAt = at;
    this.suppressed = 0;
    return admitted;
  }
}
