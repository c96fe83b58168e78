import { windowStart, type ConsumeRequest, type ConsumeResult, type RateLimiter, type WindowState } from './limiter.ts';

interface Counter {
  start: number;
  end: number;
  count: number;
}

interface Strikes {
  count: number;
  until: number;
}

export interface MemoryLimiterOptions {
  /**
   * Most subjects held per namespace (the part of the subject before ':'); beyond it the least
   * recently used are dropped, so a flood of distinct addresses cannot grow memory without bound.
   */
  readonly maxSubjects?: number;
  /** How often idle subjects (all windows over) are swept out. */
  readonly sweepEveryMs?: number;
  /** Time source for sweeping; the same injected clock the requests use. */
  readonly now?: () => number;
}

/**
 * Counters in this process. JavaScript runs one request's check-and-count without interruption,
 * so admission is exact for one instance without locks.
 */
export class MemoryLimiter implements RateLimiter {
  private readonly namespaces = new Map<string, Map<string, Map<string, Counter>>>();
  private readonly strikes = new Map<string, Strikes>();
  private readonly maxSubjects: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryLimiterOptions = {}) {
    this.maxSubjects = options.maxSubjects ?? 100_000;
    const now = options.now ?? (() => Date.now());
    this.sweeper = setInterval(() => this.sweep(now()), options.sweepEveryMs ?? 30_000);
    this.sweeper.unref();
  }

  /** Synchronous; also what the Redis limiter answers with while Redis is unreachable. */
  consume(request: ConsumeRequest, now: number): ConsumeResult {
    const counters = this.countersOf(request.subject);
    let allowed = !request.peek;
    const current: Counter[] = [];
    for (const window of request.windows) {
      const start = windowStart(now, window.seconds);
      let counter = counters.get(window.name);
      if (!counter || counter.start !== start) {
        counter = { start, end: start + window.seconds * 1000, count: 0 };
        counters.set(window.name, counter);
      }
      if (counter.count >= window.limit) allowed = false;
      current.push(counter);
    }
    if (allowed) for (const counter of current) counter.count += 1;
    const windows: WindowState[] = request.windows.map((window, index) => {
      const counter = current[index] as Counter;
      return { name: window.name, limit: window.limit, remaining: Math.max(0, window.limit - counter.count), resetAt: counter.end, seconds: window.seconds };
    });
    let strikes = 0;
    if (!allowed && !request.peek && request.strikeSubject !== undefined) {
      const blockedUntil = Math.max(...windows.filter((window) => window.remaining === 0).map((window) => window.resetAt));
      strikes = this.strike(request.strikeSubject, now, blockedUntil);
    }
    return { allowed, windows, strikes };
  }

  async clearStrikes(strikeSubject: string): Promise<void> {
    this.strikes.delete(strikeSubject);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** Subjects currently held, for tests of the memory bound. */
  size(): number {
    let total = this.strikes.size;
    for (const subjects of this.namespaces.values()) total += subjects.size;
    return total;
  }

  sweep(now: number): void {
    for (const subjects of this.namespaces.values()) {
      for (const [subject, counters] of subjects) {
        let live = false;
        for (const counter of counters.values()) if (counter.end > now) live = true;
        if (!live) subjects.delete(subject);
      }
    }
    for (const [subject, strikes] of this.strikes) if (strikes.until <= now) this.strikes.delete(subject);
  }

  private strike(subject: string, now: number, until: number): number {
    const previous = this.strikes.get(subject);
    const strikes = previous && previous.until > now ? { count: previous.count + 1, until: Math.max(previous.until, until) } : { count: 1, until };
    this.strikes.set(subject, strikes);
    return strikes.count;
  }

  private countersOf(subject: string): Map<string, Counter> {
    const separator = subject.indexOf(':');
    const namespace = separator === -1 ? '' : subject.slice(0, separator);
    let subjects = this.namespaces.get(namespace);
    if (!subjects) {
      subjects = new Map();
      this.namespaces.set(namespace, subjects);
    }
    let counters = subjects.get(subject);
    if (counters) {
      // Re-insert so Map order is least recently used first.
      subjects.delete(subject);
    } else {
      counters = new Map();
      if (subjects.size >= this.maxSubjects) {
        const oldest = subjects.keys().next();
        if (!oldest.done) subjects.delete(oldest.value);
      }
    }
    subjects.set(subject, counters);
    return counters;
  }
}
