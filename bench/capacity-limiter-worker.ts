import { parentPort, workerData } from 'node:worker_threads';
import { MemoryLimiter } from '../src/ratelimit/memory-limiter.ts';
import { RedisLimiter } from '../src/ratelimit/redis-limiter.ts';
import { limiterRequest } from './capacity-limiter-request.ts';

/** What the limiter part sends each worker thread. */
export interface LimiterWorkerData {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly callers: number;
  readonly subjects: number;
  /** performance.timeOrigin-based milliseconds: the window every worker counts in. */
  readonly startAt: number;
  readonly endAt: number;
}

export interface LimiterWorkerResult {
  readonly calls: number;
  /** Calls answered by the in-process fallback (Redis too slow or away) or refused: failures. */
  readonly failures: number;
  readonly firstFailure: string | undefined;
}

/**
 * One of the limiter part's load generators: the service's own RedisLimiter, on one connection, with
 * `callers` consume() calls in flight, as one instance under load has.
 */
async function drive(data: LimiterWorkerData): Promise<LimiterWorkerResult> {
  // A timeout far beyond any queueing, so that a slow answer counts as a call, not a fallback.
  const limiter = new RedisLimiter({
    url: data.redisUrl,
    keyPrefix: data.keyPrefix,
    fallback: new MemoryLimiter(),
    timeoutMs: 10_000,
  });
  const wallNow = () => performance.timeOrigin + performance.now();
  let [calls, failures, firstFailure] = [0, 0, undefined as string | undefined];
  const caller = async (): Promise<void> => {
    while (wallNow() < data.endAt) {
      const subject = Math.floor(Math.random() * data.subjects);
      const result = await limiter.consume(limiterRequest(subject), Date.now());
      const counted = wallNow();
      if (counted < data.startAt || counted >= data.endAt) continue;
      calls += 1;
      if (result.fallback || !result.allowed) {
        failures += 1;
        firstFailure ??= result.fallback ? 'answered by the fallback' : 'refused';
      }
    }
  };
  try {
    await limiter.ping();
    await Promise.all(Array.from({ length: data.callers }, caller));
  } finally {
    await limiter.close();
  }
  return { calls, failures, firstFailure };
}

parentPort?.postMessage(await drive(workerData as LimiterWorkerData));
