import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { MemoryLimiter } from '../src/ratelimit/memory-limiter.ts';
import { RedisLimiter } from '../src/ratelimit/redis-limiter.ts';
import type { LimiterRun } from './capacity-model.ts';
import { limiterRequest } from './capacity-limiter-request.ts';
import type { LimiterWorkerData, LimiterWorkerResult } from './capacity-limiter-worker.ts';
import { connectRedis, freshRedisPrefix, log } from './capacity-resources.ts';
import type { CapacitySettings } from './capacity-settings.ts';
import type { CleanUp } from './entry.ts';

const run = promisify(execFile);

/** Distinct accounts (and keys) the calls spread over. */
const SUBJECTS = 100_000;
/** The subject of the sample call, recognisable in its keys. */
const SAMPLE_SUBJECT = 424_242;
const WORKERS = 2;
const CALLERS_PER_WORKER = 64;
const BENCHMARK_CLIENTS = 50;
const BENCHMARK_PIPELINE = 16;
const BENCHMARK_THREADS = 2;

interface LimiterPart {
  readonly runs: LimiterRun[];
  readonly problems: string[];
  readonly redisVersion: string;
}

/**
 * One Redis's limiter script calls a second, two ways: the service's RedisLimiter in worker threads
 * (a connection each, many calls in flight, as instances send them), and redis-benchmark sending
 * the very EVALSHA the service sends, subjects randomised. Redis's own CPU over each run tells
 * whether Redis or the load generator was the bottleneck.
 */
export async function measureLimiter(settings: CapacitySettings, cleanUps: CleanUp[]): Promise<LimiterPart> {
  const keyPrefix = freshRedisPrefix(settings.redisUrl, cleanUps);
  const info = await connectRedis(settings.redisUrl);
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await info.info('server'))?.[1] ?? 'unknown';
    const sample = await sampleCall(settings.redisUrl, keyPrefix);
    const runs: LimiterRun[] = [];
    const problems: string[] = [];
    const workers = await driveWorkers(settings, keyPrefix, info);
    runs.push(workers.run);
    problems.push(...workers.problems);
    const benchmark = findOnPath('redis-benchmark');
    if (benchmark === undefined) log('limiter: redis-benchmark is not installed; only the service’s client measured');
    else if (new URL(settings.redisUrl).protocol !== 'redis:') log('limiter: redis-benchmark skipped (TLS URL)');
    else {
      const result = await driveBenchmark(benchmark, settings, sample, info);
      if (typeof result === 'string') problems.push(`limiter redis-benchmark: ${result}`);
      else runs.push(result);
    }
    for (const { source, callsPerSecond, redisCpu } of runs)
      log(`limiter ${source}: ${callsPerSecond.toFixed(0)} calls/s, Redis CPU ${(redisCpu * 100).toFixed(0)}%`);
    return { runs, problems, redisVersion };
  } finally {
    info.disconnect();
  }
}

/**
 * The arguments of one EVALSHA as the service's limiter sends it, watched with MONITOR: the
 * script's SHA and its keys and arguments, whatever version of the script is checked out. The
 * client sends the script itself (EVAL) on its first call, and its SHA from then on.
 */
async function sampleCall(redisUrl: string, keyPrefix: string): Promise<string[]> {
  // MONITOR runs on a connection of its own; this one only names the server.
  const connection = new Redis(redisUrl, { lazyConnect: true, retryStrategy: () => null });
  const limiter = new RedisLimiter({ url: redisUrl, keyPrefix, fallback: new MemoryLimiter(), timeoutMs: 5000 });
  try {
    const watcher = await connection.monitor();
    const seen = new Promise<string[]>((resolve) =>
      watcher.on('monitor', (_time: string, args: string[]) => {
        if (args[0]?.toLowerCase() === 'evalsha' && args.some((arg) => arg.startsWith(keyPrefix))) resolve(args);
      }),
    );
    await limiter.ping();
    for (let call = 0; call < 2; call += 1) {
      const result = await limiter.consume(limiterRequest(SAMPLE_SUBJECT), Date.now());
      if (result.fallback) throw new Error('the limiter could not reach Redis');
    }
    const args = await Promise.race([seen, sleep(5000, undefined)]);
    watcher.disconnect();
    if (args === undefined) throw new Error('MONITOR showed no EVALSHA of the limiter');
    return args;
  } finally {
    await limiter.close();
    connection.disconnect();
  }
}

/** Redis's CPU seconds so far (user and system, every thread). */
async function redisCpuSeconds(info: Redis): Promise<number> {
  const text = await info.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([0-9.]+)`).exec(text)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function driveWorkers(settings: CapacitySettings, keyPrefix: string, info: Redis) {
  const wallNow = () => performance.timeOrigin + performance.now();
  // Time for every worker to load and connect before the window opens.
  const startAt = wallNow() + 2000;
  const endAt = startAt + settings.durationSeconds * 1000;
  const data = {
    redisUrl: settings.redisUrl,
    keyPrefix,
    callers: CALLERS_PER_WORKER,
    subjects: SUBJECTS,
    startAt,
    endAt,
  } satisfies LimiterWorkerData;
  const results = Array.from({ length: WORKERS }, () => {
    const worker = new Worker(new URL('./capacity-limiter-worker.ts', import.meta.url), { workerData: data });
    return new Promise<LimiterWorkerResult>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  });
  await sleep(startAt - wallNow());
  const cpuBefore = await redisCpuSeconds(info);
  await sleep(endAt - wallNow());
  const cpuAfter = await redisCpuSeconds(info);
  const settled = await Promise.all(results);
  const calls = settled.reduce((sum, result) => sum + result.calls, 0);
  const failures = settled.reduce((sum, result) => sum + result.failures, 0);
  const firstFailure = settled.find((result) => result.firstFailure !== undefined)?.firstFailure;
  const seconds = settings.durationSeconds;
  const run: LimiterRun = {
    source: 'RedisLimiter.consume',
    detail: `${WORKERS} threads × 1 connection × ${CALLERS_PER_WORKER} calls in flight`,
    callsPerSecond: calls / seconds,
    redisCpu: (cpuAfter - cpuBefore) / seconds,
  };
  const problems = failures > 0 ? [`limiter: ${failures} of ${calls} calls failed (first: ${firstFailure})`] : [];
  return { run, problems };
}

/** The sample call with its subject replaced by redis-benchmark's placeholder, fresh per call and key. */
export function benchmarkCommand(sample: readonly string[], subject: number): string[] {
  const keyCount = Number(sample[2]);
  // Only where the subject stands in a key (`{account:N}:`, `key_N`), never inside a window's start.
  const placed = new RegExp(`(?<=account:|key_)${subject}(?=[:}]|$)`, 'g');
  return sample.map((arg, index) => (index >= 3 && index < 3 + keyCount ? arg.replace(placed, '__rand_int__') : arg));
}

async function driveBenchmark(
  binary: string,
  settings: CapacitySettings,
  sample: readonly string[],
  info: Redis,
): Promise<LimiterRun | string> {
  const url = new URL(settings.redisUrl);
  const connection = [
    ...['-h', url.hostname || '127.0.0.1', '-p', url.port || '6379'],
    ...(url.password ? ['-a', decodeURIComponent(url.password), '--no-auth-warning'] : []),
    ...(url.username ? ['--user', decodeURIComponent(url.username)] : []),
    ...(url.pathname.length > 1 ? ['--dbnum', url.pathname.slice(1)] : []),
  ];
  const command = benchmarkCommand(sample, SAMPLE_SUBJECT);
  const load = [
    ...['--threads', `${BENCHMARK_THREADS}`],
    '-c',
    `${BENCHMARK_CLIENTS}`,
    '-P',
    `${BENCHMARK_PIPELINE}`,
    '-r',
    `${SUBJECTS}`,
    '--csv',
  ];
  const once = async (requests: number): Promise<number | string> => {
    try {
      const { stdout } = await run(binary, [...connection, ...load, '-n', `${requests}`, ...command]);
      const rate = Number(/^"[^"]*","([0-9.]+)"/m.exec(stdout.split('\n').slice(1).join('\n'))?.[1]);
      return Number.isFinite(rate) && rate > 0 ? rate : `no rate in its output: ${stdout.trim()}`;
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      return `${stderr || stdout || String(error)}`.trim().split('\n').at(-1) ?? 'failed';
    }
  };
  // A short run finds the rate, so that the measured one lasts about the duration.
  const estimate = await once(20_000);
  if (typeof estimate === 'string') return estimate;
  const requests = Math.max(20_000, Math.round(estimate * settings.durationSeconds));
  const started = performance.now();
  const cpuBefore = await redisCpuSeconds(info);
  const rate = await once(requests);
  const cpuAfter = await redisCpuSeconds(info);
  if (typeof rate === 'string') return rate;
  return {
    source: 'redis-benchmark EVALSHA',
    detail: `${BENCHMARK_CLIENTS} clients × pipelines of ${BENCHMARK_PIPELINE}, ${BENCHMARK_THREADS} threads`,
    callsPerSecond: rate,
    redisCpu: (cpuAfter - cpuBefore) / ((performance.now() - started) / 1000),
  };
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}
