import { performance } from 'node:perf_hooks';
import type { Clock } from './clock.ts';
import { settleWithin } from './deadline.ts';

/** A dependency /readyz must reach: storage always, Redis when configured. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<void>;
}

export interface ProbeResult {
  readonly name: string;
  readonly ok: boolean;
}

/** One probe of every dependency, and when it ended. */
export interface ReadinessReading {
  readonly results: readonly ProbeResult[];
  /** When the probe ended, by the service's clock (milliseconds since the epoch). */
  readonly at: number;
  /** When the probe ended, in monotonic milliseconds: how old the reading is. */
  readonly endedAt: number;
}

/** How often dependencies are probed in the background, whether or not anything asks. */
export const READINESS_INTERVAL_MS = 5000;
/** A reading older than this makes a scrape or a status request start a new probe, without waiting for it. */
export const READINESS_FRESH_MS = 1000;

export async function probe(dependency: ReadinessCheck, timeoutMs: number): Promise<ProbeResult> {
  try {
    await settleWithin(dependency.check(), timeoutMs, () => new Error(`${dependency.name} did not answer in time`));
    return { name: dependency.name, ok: true };
  } catch {
    return { name: dependency.name, ok: false };
  }
}

export interface ReadinessMonitorOptions {
  /** Longest a probe may take before its dependency counts as unreachable (STORAGE_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly intervalMs?: number;
  /** Monotonic milliseconds; injected by tests. */
  readonly now?: () => number;
}

/**
 * The dependencies' readiness, probed beside the requests that report it rather than inside them:
 * every READINESS_INTERVAL_MS in the background, and when a reader finds the last reading older than
 * READINESS_FRESH_MS. A scrape or a status request then answers at once with the last reading, while
 * storage hangs too, instead of waiting STORAGE_TIMEOUT_MS for the probe. /readyz waits for a probe of
 * its own, as a balancer expects. One probe runs at a time; callers meanwhile share it.
 */
export class ReadinessMonitor {
  readonly checks: readonly ReadinessCheck[];
  private readonly options: ReadinessMonitorOptions;
  private readonly now: () => number;
  private last: ReadinessReading | undefined;
  private running: Promise<ReadinessReading> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(checks: readonly ReadinessCheck[], options: ReadinessMonitorOptions) {
    this.checks = checks;
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  /** Probes at once, then every interval; the timer keeps no process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    void this.probe();
    this.timer = setInterval(() => void this.probe(), this.options.intervalMs ?? READINESS_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A probe of every dependency: the one under way, or a new one. Never rejects. */
  probe(): Promise<ReadinessReading> {
    this.running ??= Promise.all(this.checks.map((check) => probe(check, this.options.timeoutMs))).then((results) => {
      this.last = { results, at: this.options.clock.now(), endedAt: this.now() };
      this.running = undefined;
      return this.last;
    });
    return this.running;
  }

  /**
   * The last reading, without waiting: a probe starts beside the caller when the reading is older
   * than READINESS_FRESH_MS. Undefined until the first probe ends.
   */
  latest(): ReadinessReading | undefined {
    if (this.last === undefined || this.now() - this.last.endedAt >= READINESS_FRESH_MS) void this.probe();
    return this.last;
  }

  /** The last reading, or the first probe's when none has ended yet. */
  async reading(): Promise<ReadinessReading> {
    return this.latest() ?? this.probe();
  }

  /** Whether the dependency answered its last probe; undefined before the first probe ends. */
  answered(name: string): boolean | undefined {
    return this.last?.results.find((result) => result.name === name)?.ok;
  }
}
