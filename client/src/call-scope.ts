/**
 * One call's lifetime: its own AbortSignal, aborted by any of the given signals (with that signal's reason) or
 * by the timeout (with the error `onTimeout` makes). AbortSignal.any would do the linking, but Node 18 lacks it.
 */
export class CallScope {
  private readonly controller = new AbortController();
  private readonly cleanups: Array<() => void> = [];

  constructor(signals: ReadonlyArray<AbortSignal | undefined>, timeoutMs: number | undefined, onTimeout: () => Error) {
    for (const signal of signals) {
      if (signal === undefined) continue;
      if (signal.aborted) {
        this.controller.abort(signal.reason);
        return;
      }
      const onAbort = (): void => this.controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.cleanups.push(() => signal.removeEventListener('abort', onAbort));
    }
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => this.controller.abort(onTimeout()), timeoutMs);
      this.cleanups.push(() => clearTimeout(timer));
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Ends the scope: the caller's signals and the timer let go of it. */
  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}
