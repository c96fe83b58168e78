/**
 * The servers, proxies and browsers a suite starts for itself, started so that a failure costs
 * seconds, not the runner's timeout: each start has a deadline, a failure is thrown naming the part
 * that did not start, and everything started so far (or still starting) is stopped, so that no port,
 * proxy or child process holds the test process open.
 *
 *   const parts = new StartedParts();
 *   before(async () => {
 *     proxy = await parts.start('a TCP proxy', () => startTcpProxy(5432), (started) => started.close());
 *     bouncer = await parts.start('PgBouncer', () => startPgBouncer(…), (started) => started.stop());
 *   });
 *   after(() => parts.stopAll());
 *
 * Parts may start at once too (`Promise.all([parts.start(…), parts.start(…)])`): one that is still
 * starting when another fails is stopped as soon as it is up.
 */
export class StartedParts {
  readonly #stops: { readonly name: string; readonly stop: () => Promise<unknown> }[] = [];
  #failed = false;

  /** Resolves with the started part; rejects, naming it, when it fails or outlasts `deadlineMs`. */
  async start<T>(
    name: string,
    start: () => Promise<T>,
    stop: (started: T) => Promise<unknown> | unknown,
    deadlineMs = 30_000,
  ): Promise<T> {
    const starting = start();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`still starting after ${deadlineMs} ms`)), deadlineMs);
    });
    try {
      const started = await Promise.race([starting, deadline]);
      this.#keep(name, started, stop);
      return started;
    } catch (error) {
      // A start that outlasted its deadline is stopped whenever it does come up.
      starting.then((late) => this.#keep(name, late, stop)).catch(() => undefined);
      this.#failed = true;
      await this.stopAll();
      throw new Error(`${name} did not start: ${reasonOf(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops every part started, the last first; safe to call again, and after a failed start. */
  async stopAll(): Promise<void> {
    const problems: string[] = [];
    for (const { name, stop } of this.#stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        problems.push(`${name}: ${reasonOf(error)}`);
      }
    }
    if (problems.length > 0) throw new Error(`stopping failed for ${problems.join('; ')}`);
  }

  #keep<T>(name: string, started: T, stop: (started: T) => Promise<unknown> | unknown): void {
    const entry = { name, stop: async () => stop(started) };
    if (this.#failed) {
      // Another part already failed: this one is not wanted, and nothing else would stop it.
      void entry.stop().catch(() => undefined);
      return;
    }
    this.#stops.push(entry);
  }

  /** Forgets an earlier failure, for a suite that starts its parts again before each test. */
  reset(): void {
    this.#failed = false;
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
