/**
 * The one timeout race of the service: storage calls, Redis commands and readiness probes all end
 * through it. The work itself is not cancelled (its own timeouts end it later); only the wait for
 * it is bounded, so a caller always hears back within `timeoutMs`.
 */
export function settleWithin<T>(work: Promise<T>, timeoutMs: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
