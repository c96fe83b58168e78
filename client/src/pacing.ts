import { policiesOf, windowsOf } from './rate-limit.ts';

/** What the client knows of one window of the account, on its own clock. */
interface KnownWindow {
  readonly name: string;
  /** Requests left after those already answered; requests in flight are counted apart. */
  remaining: number;
  /** When the window resets, in milliseconds of the client's clock. */
  resetAt: number;
  /** The quota of a fresh window (`q`), when the policy was given. */
  readonly limit: number | undefined;
  /** The window's length (`w`), when the policy was given. */
  readonly lengthMs: number | undefined;
}

/** What a call should do before it is sent. */
export type Gate =
  | { readonly kind: 'send' }
  /** The known remainder is taken by requests in flight: their answers will tell more. */
  | { readonly kind: 'await-answer' }
  /** A window is spent: wait until it resets. */
  | { readonly kind: 'wait'; readonly untilMs: number; readonly window: string };

/** Answers of one window carry resets within a second or so of each other; a later window resets a length later. */
const UNKNOWN_LENGTH_TOLERANCE_MS = 1000;

function toleranceOf(window: KnownWindow): number {
  return window.lengthMs === undefined ? UNKNOWN_LENGTH_TOLERANCE_MS : window.lengthMs / 2;
}

/** The windows an answer tells: the `RateLimit` field's, or else the single window of `X-RateLimit-*`. */
function windowsTold(headers: Headers, now: number): KnownWindow[] {
  const policies = policiesOf(headers);
  const told = windowsOf(headers).map((window): KnownWindow => {
    const seconds = policies.get(window.name)?.seconds;
    return {
      name: window.name,
      remaining: window.remaining,
      resetAt: now + window.resetSeconds * 1000,
      limit: window.limit,
      lengthMs: seconds === undefined ? undefined : seconds * 1000,
    };
  });
  if (told.length > 0) return told;
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? Number.NaN);
  const reset = Number(headers.get('x-ratelimit-reset') ?? Number.NaN);
  if (!Number.isInteger(remaining) || !Number.isInteger(reset)) return [];
  // X-RateLimit-Reset is a Unix time: read it against the answer's own Date, so that clock skew does not matter.
  const date = Date.parse(headers.get('date') ?? '');
  const resetInMs = reset * 1000 - (Number.isNaN(date) ? Date.now() : date);
  return [
    { name: 'x-ratelimit', remaining, resetAt: now + Math.max(0, resetInMs), limit: undefined, lengthMs: undefined },
  ];
}

/**
 * The rate-limit state shared by the calls of one client: the account's windows as the answers told them, and
 * the requests in flight. A call that would be refused waits here instead of being sent.
 */
export class RateLimitPacer {
  private readonly windows = new Map<string, KnownWindow>();
  private inFlight = 0;
  private readonly listeners = new Set<() => void>();

  /** Whether a call may be sent at `now`, counting the requests in flight against the known remainder. */
  gate(now: number): Gate {
    let spent: KnownWindow | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const window of this.current(now)) {
      if (window.remaining <= 0) {
        if (spent === undefined || window.resetAt > spent.resetAt) spent = window;
      } else fewest = Math.min(fewest, window.remaining);
    }
    if (spent !== undefined) return { kind: 'wait', untilMs: spent.resetAt, window: spent.name };
    return fewest - this.inFlight <= 0 ? { kind: 'await-answer' } : { kind: 'send' };
  }

  /** Counts a request as in flight until the returned function is called (once). */
  take(): () => void {
    this.inFlight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
      this.notify();
    };
  }

  /** Takes in the windows an answer tells, received at `now`. */
  observe(headers: Headers, now: number): void {
    for (const told of windowsTold(headers, now)) this.merge(told, now);
    this.notify();
  }

  /** Resolves at the next answer or released request; rejects when the signal aborts. */
  nextAnswer(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.listeners.delete(listener);
        reject(signal.reason);
      };
      const listener = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.listeners.add(listener);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private notify(): void {
    const waiting = [...this.listeners];
    this.listeners.clear();
    for (const listener of waiting) listener();
  }

  /**
   * Answers may arrive out of order. Within one window the remainder only falls, so the smaller one holds; an
   * answer of an earlier window is stale; one of a later window replaces what was known.
   */
  private merge(told: KnownWindow, now: number): void {
    const known = this.currentWindow(told.name, now);
    if (known === undefined || told.resetAt > known.resetAt + toleranceOf(known)) {
      this.windows.set(told.name, told);
    } else if (told.resetAt >= known.resetAt - toleranceOf(known)) {
      known.remaining = Math.min(known.remaining, told.remaining);
      known.resetAt = Math.max(known.resetAt, told.resetAt);
    }
  }

  private current(now: number): KnownWindow[] {
    return [...this.windows.keys()].flatMap((name) => this.currentWindow(name, now) ?? []);
  }

  /**
   * The window as it stands at `now`. Once it has reset, a window whose policy is known starts afresh with its
   * whole quota (the service's windows are fixed, aligned to the clock); any other is forgotten.
   */
  private currentWindow(name: string, now: number): KnownWindow | undefined {
    const window = this.windows.get(name);
    if (window === undefined || window.resetAt > now) return window;
    if (window.limit === undefined || window.lengthMs === undefined || window.lengthMs <= 0) {
      this.windows.delete(name);
      return undefined;
    }
    const periods = Math.floor((now - window.resetAt) / window.lengthMs) + 1;
    window.remaining = window.limit;
    window.resetAt += periods * window.lengthMs;
    return window;
  }
}
