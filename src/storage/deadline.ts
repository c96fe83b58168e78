import { StorageUnavailableError } from '../errors.ts';

/**
 * One deadline for a whole storage call. A call's steps have timeouts of their own (waiting for a
 * pooled connection, connecting, each statement), but they add up: several of them in a row once
 * made a 503 take more than twice the storage timeout. The work itself is not cancelled: its own
 * timeouts end it later, and a commit it still makes is what an idempotent retry then finds.
 */
export function settleWithin<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StorageUnavailableError('storage is unavailable: it did not answer in time; retry later')),
      timeoutMs,
    );
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

/** The same object, whose methods returning promises settle within `timeoutMs`. */
export function withinDeadline<T extends object>(target: T, timeoutMs: number): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result: unknown = Reflect.apply(value, object, args);
        return result instanceof Promise ? settleWithin(result, timeoutMs) : result;
      };
    },
  });
}
