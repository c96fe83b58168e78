import { ENTRY_OVERHEAD_BYTES, stringBytes } from '../memory-size.ts';
import {
  windowStart,
  type ConsumeRequest,
  type ConsumeResult,
  type RateLimiter,
  type WindowSpec,
  type WindowState,
} from './limiter.ts';

interface Counter {
  readonly window: string;
  start: number;
  end: number;
  count: number;
}

/** A subject's counters, linked into its namespace's recency list. */
interface Subject {
  readonly key: string;
  readonly namespace: Namespace;
  /** One per window name; a subject has one or two, so a scan beats a Map. */
  readonly counters: Counter[];
  /** What this subject accounts for in the limiter's byte budget. */
  bytes: number;
  older: Subject | undefined;
  newer: Subject | undefined;
}

interface Strikes {
  readonly count: number;
  readonly until: number;
  readonly bytes: number;
}

/** A counter object and its array slot. */
const COUNTER_BYTES = 80;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

export interface MemoryLimiterOptions {
  /**
   * Most bytes all subjects and strikes may take, their keys included (default 32 MiB). Beyond it
   * the least recently used entry of the largest namespace (the part of the subject before ':', or
   * the strikes) is dropped: a flood of distinct or huge addresses cannot grow memory without bound,
   * and evicts addresses rather than the accounts that use a fraction of the budget.
   */
  readonly maxBytes?: number;
  /** Most subjects held per namespace, on top of the byte budget; no limit unless told. */
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
  /** Every subject of every namespace: one lookup per request finds both its counters and its namespace. */
  private readonly subjects = new Map<string, Subject>();
  private readonly namespaces = new Map<string, Namespace>();
  /** Strikes in least to most recently struck order (Map insertion order). */
  private readonly strikes = new Map<string, Strikes>();
  private strikeBytes = 0;
  private totalBytes = 0;
  private readonly maxBytes: number;
  private readonly maxSubjects: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryLimiterOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxSubjects = options.maxSubjects ?? Number.POSITIVE_INFINITY;
    const now = options.now ?? (() => Date.now());
    this.sweeper = setInterval(() => this.sweep(now()), options.sweepEveryMs ?? 30_000);
    this.sweeper.unref();
  }

  /**
   * Also what the Redis limiter answers with while Redis is unreachable. Nothing in it awaits, so
   * each request's check-and-count runs whole before another's.
   */
  async consume(request: ConsumeRequest, now: number): Promise<ConsumeResult> {
    const subject = this.subjectOf(request.subject);
    const counters = subject.counters;
    const held = counters.length;
    const specs = request.windows;
    let allowed = !request.peek;
    for (const window of specs) if (currentCounter(counters, window, now).count >= window.limit) allowed = false;
    if (counters.length !== held) this.grow(subject, (counters.length - held) * COUNTER_BYTES);
    let blocked = false;
    const windows: WindowState[] = [];
    for (const window of specs) {
      const counter = counterOf(counters, window.name) as Counter;
      if (allowed) counter.count += 1;
      const remaining = window.limit > counter.count ? window.limit - counter.count : 0;
      if (remaining === 0) blocked = true;
      windows.push({
        name: window.name,
        limit: window.limit,
        remaining,
        resetAt: counter.end,
        seconds: window.seconds,
      });
    }
    let strikes = 0;
    if (!allowed && blocked && !request.peek && request.strikeSubject !== undefined) {
      strikes = this.strike(request.strikeSubject, now, blockedUntil(windows), subject);
    }
    return { allowed, windows, strikes, fallback: false };
  }

  async clearStrikes(strikeSubject: string): Promise<void> {
    this.deleteStrikes(strikeSubject);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** Subjects currently held, for tests of the memory bound. */
  size(): number {
    return this.subjects.size + this.strikes.size;
  }

  /** Bytes the subjects and strikes account for now, never more than maxBytes. */
  bytes(): number {
    return this.totalBytes;
  }

  sweep(now: number): void {
    for (const subject of this.subjects.values()) {
      if (!subject.counters.some((counter) => counter.end > now)) this.drop(subject);
    }
    for (const [subject, strikes] of this.strikes) if (strikes.until <= now) this.deleteStrikes(subject);
  }

  private strike(subject: string, now: number, until: number, counted: Subject): number {
    const previous = this.strikes.get(subject);
    this.deleteStrikes(subject);
    const bytes = ENTRY_OVERHEAD_BYTES + stringBytes(subject);
    const strikes =
      previous && previous.until > now
        ? { count: previous.count + 1, until: Math.max(previous.until, until), bytes }
        : { count: 1, until, bytes };
    this.strikes.set(subject, strikes);
    this.strikeBytes += bytes;
    this.totalBytes += bytes;
    this.shed(counted, subject);
    return strikes.count;
  }

  private deleteStrikes(subject: string): void {
    const strikes = this.strikes.get(subject);
    if (strikes === undefined) return;
    this.strikes.delete(subject);
    this.strikeBytes -= strikes.bytes;
    this.totalBytes -= strikes.bytes;
  }

  /**
   * The subject, now the most recently used of its namespace; the least recently used goes when
   * the namespace is full.
   */
  private subjectOf(key: string): Subject {
    const known = this.subjects.get(key);
    if (known !== undefined) {
      known.namespace.touch(known);
      return known;
    }
    const namespace = this.namespaceOf(key);
    if (namespace.size >= this.maxSubjects && namespace.oldest !== undefined) this.drop(namespace.oldest);
    const subject: Subject = { key, namespace, counters: [], bytes: 0, older: undefined, newer: undefined };
    namespace.add(subject);
    this.subjects.set(key, subject);
    this.grow(subject, ENTRY_OVERHEAD_BYTES + stringBytes(key));
    return subject;
  }

  private grow(subject: Subject, bytes: number): void {
    subject.bytes += bytes;
    subject.namespace.bytes += bytes;
    this.totalBytes += bytes;
    if (this.totalBytes > this.maxBytes) this.shed(subject, undefined);
  }

  /**
   * Drops least recently used entries until the budget holds, each from whichever namespace (or the
   * strikes) holds the most bytes, never the subject or strike being used by this request.
   */
  private shed(keep: Subject | undefined, keepStrike: string | undefined): void {
    while (this.totalBytes > this.maxBytes) {
      let largest: Namespace | undefined;
      for (const namespace of this.namespaces.values()) {
        const oldest = namespace.oldest;
        if (oldest === undefined || oldest === keep) continue;
        if (largest === undefined || namespace.bytes > largest.bytes) largest = namespace;
      }
      const oldestStrike = this.strikes.keys().next().value;
      const strikesEvictable = oldestStrike !== undefined && oldestStrike !== keepStrike;
      if (strikesEvictable && (largest === undefined || this.strikeBytes > largest.bytes)) {
        this.deleteStrikes(oldestStrike);
      } else if (largest?.oldest !== undefined) {
        this.drop(largest.oldest);
      } else {
        return; // Only what this request uses is left: a budget smaller than one entry.
      }
    }
  }

  private namespaceOf(key: string): Namespace {
    const separator = key.indexOf(':');
    const name = separator === -1 ? '' : key.slice(0, separator);
    let namespace = this.namespaces.get(name);
    if (namespace === undefined) {
      namespace = new Namespace();
      this.namespaces.set(name, namespace);
    }
    return namespace;
  }

  private drop(subject: Subject): void {
    subject.namespace.remove(subject);
    subject.namespace.bytes -= subject.bytes;
    this.totalBytes -= subject.bytes;
    this.subjects.delete(subject.key);
  }
}

/**
 * A namespace's subjects from least to most recently used. A linked list rather than Map
 * insertion order: re-inserting into a Map on every request (delete, then set) cost about half
 * of consume(); moving a list node costs a few pointer writes.
 */
class Namespace {
  size = 0;
  bytes = 0;
  oldest: Subject | undefined;
  private newest: Subject | undefined;

  add(subject: Subject): void {
    subject.older = this.newest;
    subject.newer = undefined;
    if (this.newest === undefined) this.oldest = subject;
    else this.newest.newer = subject;
    this.newest = subject;
    this.size += 1;
  }

  remove(subject: Subject): void {
    if (subject.older === undefined) this.oldest = subject.newer;
    else subject.older.newer = subject.newer;
    if (subject.newer === undefined) this.newest = subject.older;
    else subject.newer.older = subject.older;
    subject.older = undefined;
    subject.newer = undefined;
    this.size -= 1;
  }

  touch(subject: Subject): void {
    if (this.newest === subject) return;
    this.remove(subject);
    this.add(subject);
  }
}

function counterOf(counters: readonly Counter[], window: string): Counter | undefined {
  for (const counter of counters) if (counter.window === window) return counter;
  return undefined;
}

/** The subject's counter for this window, started afresh when the window has moved on. */
function currentCounter(counters: Counter[], window: WindowSpec, now: number): Counter {
  const start = windowStart(now, window.seconds);
  const counter = counterOf(counters, window.name);
  if (counter === undefined) {
    const started: Counter = { window: window.name, start, end: start + window.seconds * 1000, count: 0 };
    counters.push(started);
    return started;
  }
  if (counter.start !== start) {
    counter.start = start;
    counter.end = start + window.seconds * 1000;
    counter.count = 0;
  }
  return counter;
}

/** When the last of the full windows ends. */
function blockedUntil(windows: readonly WindowState[]): number {
  let until = 0;
  for (const window of windows) if (window.remaining === 0 && window.resetAt > until) until = window.resetAt;
  return until;
}
