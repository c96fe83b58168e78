import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD_BYTES, stringBytes } from '../memory-size.ts';
import {
  BAN_REPEAT_MS,
  windowStart,
  type Ban,
  type BanRule,
  type BanSubject,
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

/** A subject's counters: one per window name; a subject has one or two, so a scan beats a Map. */
interface Subject {
  readonly counters: Counter[];
}

interface Strikes {
  readonly count: number;
  readonly until: number;
}

/** A strike subject's latest ban: its end (0 once lifted), and how many bans began since the chain's first. */
interface BanRecord {
  readonly until: number;
  /** Bans in the chain, this one included: each began within BAN_REPEAT_MS of the one before. */
  readonly count: number;
  /** When the latest ban began. */
  readonly since: number;
}

/** What the byte budget needs of each namespace's cache (and of the strikes' and bans'), whatever it holds. */
interface Evictable {
  readonly calculatedSize: number;
  readonly size: number;
  /** Keys from least to most recently used. */
  rkeys(): Iterator<string>;
  /** Drops the least recently used entry. */
  pop(): unknown;
}

/** A counter object and its array slot. */
const COUNTER_BYTES = 80;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

export interface MemoryLimiterOptions {
  /**
   * Most bytes all subjects, strikes and bans may take, their keys included (default 32 MiB).
   * Beyond it the least recently used entry of the largest namespace (the part of the subject
   * before ':', or the strikes, or the bans) is dropped: a flood of distinct or huge addresses
   * cannot grow memory without bound, and evicts addresses rather than the accounts (or the few
   * bans) that use a fraction of the budget.
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
 *
 * Each namespace is an LRU cache of its own, bounded by the whole byte budget (and by maxSubjects);
 * across namespaces the budget is kept by evicting from the largest. An entry larger than the whole
 * budget counts as the whole budget: it is held, alone, while used, instead of being refused and
 * never counted.
 */
export class MemoryLimiter implements RateLimiter {
  private readonly namespaces = new Map<string, LRUCache<string, Subject>>();
  private readonly strikes: LRUCache<string, Strikes>;
  private readonly bans: LRUCache<string, BanRecord>;
  private readonly maxBytes: number;
  private readonly maxSubjects: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryLimiterOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxSubjects = options.maxSubjects ?? Number.POSITIVE_INFINITY;
    this.strikes = new LRUCache<string, Strikes>({
      maxSize: this.maxBytes,
      sizeCalculation: (_strikes, subject) => this.withinBudget(ENTRY_OVERHEAD_BYTES + stringBytes(subject)),
    });
    this.bans = new LRUCache<string, BanRecord>({
      maxSize: this.maxBytes,
      sizeCalculation: (_ban, subject) => this.withinBudget(ENTRY_OVERHEAD_BYTES + stringBytes(subject)),
    });
    const now = options.now ?? (() => Date.now());
    this.sweeper = setInterval(() => this.sweep(now()), options.sweepEveryMs ?? 30_000);
    this.sweeper.unref();
  }

  /**
   * Also what the Redis limiter answers with while Redis is unreachable. Nothing in it awaits, so
   * each request's check-and-count runs whole before another's.
   */
  async consume(request: ConsumeRequest, now: number): Promise<ConsumeResult> {
    const specs = request.windows;
    const counters = this.subjectOf(request.subject, specs, now).counters;
    const banned = this.activeBan(request.strikeSubject, now);
    let allowed = !request.peek && banned === undefined;
    for (const window of specs) if (currentCounter(counters, window, now).count >= window.limit) allowed = false;
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
    let ban: Ban | null = banned === undefined ? null : { until: banned.until, began: false };
    const strikeSubject = request.strikeSubject;
    if (!allowed && blocked && !request.peek && banned === undefined && strikeSubject !== undefined) {
      strikes = this.strike(strikeSubject, now, blockedUntil(windows), request.subject);
      if (request.ban !== undefined && strikes >= request.ban.atStrike)
        ban = this.beginBan(strikeSubject, request.ban, now, request.subject);
    }
    return { allowed, windows, strikes, fallback: false, ban };
  }

  async liftBan({ strikeSubject }: BanSubject, now: number, until?: number): Promise<boolean> {
    const record = this.bans.peek(strikeSubject);
    if (until !== undefined && record?.until !== until) return false;
    this.strikes.delete(strikeSubject);
    if (record === undefined || record.until === 0) return false;
    // The record stays, ended: the next ban's length still counts this one.
    this.bans.set(strikeSubject, { ...record, until: 0 });
    return record.until > now;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** Subjects currently held, for tests of the memory bound. */
  size(): number {
    let size = 0;
    for (const cache of this.caches()) size += cache.size;
    return size;
  }

  /** Bytes the subjects, strikes and bans account for now, never more than maxBytes. */
  bytes(): number {
    let bytes = 0;
    for (const cache of this.caches()) bytes += cache.calculatedSize;
    return bytes;
  }

  sweep(now: number): void {
    for (const namespace of this.namespaces.values()) {
      deleteWhere(namespace, (subject) => !subject.counters.some((counter) => counter.end > now));
    }
    deleteWhere(this.strikes, (strikes) => strikes.until <= now);
    deleteWhere(this.bans, (ban) => ban.until <= now && !repeats(ban, now));
  }

  private activeBan(strikeSubject: string | undefined, now: number): BanRecord | undefined {
    if (strikeSubject === undefined || this.bans.size === 0) return undefined;
    const record = this.bans.get(strikeSubject);
    return record !== undefined && record.until > now ? record : undefined;
  }

  /** Bans the subject from now, for twice as long as its previous ban if that began within BAN_REPEAT_MS. */
  private beginBan(strikeSubject: string, rule: BanRule, now: number, countedSubject: string): Ban {
    const previous = this.bans.get(strikeSubject);
    const earlier = previous !== undefined && repeats(previous, now) ? previous.count : 0;
    const length = Math.min(rule.maxMs, rule.baseMs * 2 ** Math.min(earlier, 30));
    const record: BanRecord = { until: now + length, count: earlier + 1, since: now };
    this.strikes.delete(strikeSubject);
    this.bans.set(strikeSubject, record);
    this.shed(countedSubject, strikeSubject);
    return { until: record.until, began: true };
  }

  private strike(strikeSubject: string, now: number, until: number, countedSubject: string): number {
    const previous = this.strikes.get(strikeSubject);
    const strikes =
      previous && previous.until > now
        ? { count: previous.count + 1, until: Math.max(previous.until, until) }
        : { count: 1, until };
    this.strikes.set(strikeSubject, strikes);
    this.shed(countedSubject, strikeSubject);
    return strikes.count;
  }

  /**
   * The subject, now the most recently used of its namespace, with a counter for each window; the
   * least recently used goes when the namespace or the budget is full.
   */
  private subjectOf(key: string, windows: readonly WindowSpec[], now: number): Subject {
    const namespace = this.namespaceOf(key);
    const known = namespace.get(key);
    if (known !== undefined && windows.every((window) => counterOf(known.counters, window.name) !== undefined))
      return known;
    const subject = known ?? { counters: [] };
    for (const window of windows) {
      if (counterOf(subject.counters, window.name) === undefined) subject.counters.push(startedCounter(window, now));
    }
    // Stored anew, so that its size counts the counters just added.
    if (known !== undefined) namespace.delete(key);
    namespace.set(key, subject);
    this.shed(key, undefined);
    return subject;
  }

  /**
   * Drops least recently used entries until the budget holds, each from whichever namespace (or the
   * strikes, or the bans) holds the most bytes, never the subject, strike or ban used by this request.
   */
  private shed(keepSubject: string, keepStrike: string | undefined): void {
    while (this.bytes() > this.maxBytes) {
      let largest: Evictable | undefined;
      for (const cache of this.caches()) {
        const keep = cache === this.strikes || cache === this.bans ? keepStrike : keepSubject;
        if (evictable(cache, keep) && cache.calculatedSize > (largest?.calculatedSize ?? -1)) largest = cache;
      }
      // Nothing but what this request uses is left: a budget smaller than it.
      if (largest === undefined) return;
      largest.pop();
    }
  }

  private namespaceOf(key: string): LRUCache<string, Subject> {
    const separator = key.indexOf(':');
    const name = separator === -1 ? '' : key.slice(0, separator);
    let namespace = this.namespaces.get(name);
    if (namespace === undefined) {
      namespace = new LRUCache<string, Subject>({
        ...(Number.isFinite(this.maxSubjects) ? { max: this.maxSubjects } : {}),
        maxSize: this.maxBytes,
        sizeCalculation: (subject, subjectKey) =>
          this.withinBudget(ENTRY_OVERHEAD_BYTES + stringBytes(subjectKey) + subject.counters.length * COUNTER_BYTES),
      });
      this.namespaces.set(name, namespace);
    }
    return namespace;
  }

  private withinBudget(bytes: number): number {
    return Math.min(bytes, this.maxBytes);
  }

  private *caches(): Iterable<Evictable> {
    yield* this.namespaces.values();
    yield this.strikes;
    yield this.bans;
  }
}

/** Whether the cache has a least recently used entry that may go (not the one `keep` names). */
function evictable(cache: Evictable, keep: string | undefined): boolean {
  const oldest = cache.rkeys().next();
  return oldest.done !== true && oldest.value !== keep;
}

/** Deletes every entry `done` says is over; collected first, so the cache is not changed while iterated. */
function deleteWhere<V extends object>(cache: LRUCache<string, V>, done: (value: V) => boolean): void {
  const over: string[] = [];
  for (const [key, value] of cache.entries()) if (done(value)) over.push(key);
  for (const key of over) cache.delete(key);
}

function counterOf(counters: readonly Counter[], window: string): Counter | undefined {
  for (const counter of counters) if (counter.window === window) return counter;
  return undefined;
}

function startedCounter(window: WindowSpec, now: number): Counter {
  const start = windowStart(now, window.seconds);
  return { window: window.name, start, end: start + window.seconds * 1000, count: 0 };
}

/** The subject's counter for this window, started afresh when the window has moved on. */
function currentCounter(counters: Counter[], window: WindowSpec, now: number): Counter {
  const counter = counterOf(counters, window.name) as Counter;
  const start = windowStart(now, window.seconds);
  if (counter.start !== start) {
    counter.start = start;
    counter.end = start + window.seconds * 1000;
    counter.count = 0;
  }
  return counter;
}

/** Whether a ban beginning now would follow this one within BAN_REPEAT_MS, and so last longer. */
function repeats(ban: BanRecord, now: number): boolean {
  return ban.since >= now - BAN_REPEAT_MS;
}

/** When the last of the full windows ends. */
function blockedUntil(windows: readonly WindowState[]): number {
  let until = 0;
  for (const window of windows) if (window.remaining === 0 && window.resetAt > until) until = window.resetAt;
  return until;
}
