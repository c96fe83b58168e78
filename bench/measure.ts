import autocannon from 'autocannon';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSecondsOf, machineCpuSeconds } from './child-process.ts';
import type { Scenario } from './scenarios.ts';

export interface LoadSettings {
  readonly connections: number;
  readonly seconds: number;
  /** Sent with every request, to the service and to the bare server alike. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Figures of one autocannon run against one target. */
export interface RunFigures {
  readonly requestsPerSecond: number;
  /** Latency percentiles in milliseconds, at microsecond resolution. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  /** CPU used by the target process, in percent of one core; undefined without /proc. */
  readonly targetCpuPercent: number | undefined;
  /** CPU used by this process (the load generator), in percent of one core. */
  readonly loadGeneratorCpuPercent: number;
  /**
   * CPU used by everything else on the machine (other processes, and kernel work not charged to
   * ours), and CPU stolen by the hypervisor, in percent of one core. High values mean a noisy run.
   */
  readonly otherCpuPercent: number | undefined;
  readonly stealCpuPercent: number | undefined;
}

/** A server under load: where to send requests, and whose CPU time to read. */
export interface LoadTarget {
  readonly url: string;
  readonly pid: number;
}

/**
 * Runs autocannon for `seconds` against `url`. Latency is recorded here from every response's own
 * timing (autocannon's histogram has whole-millisecond resolution, too coarse for a 1 ms answer).
 */
export async function measure(
  url: string,
  targetPid: number,
  scenario: Scenario,
  settings: LoadSettings,
): Promise<RunFigures> {
  const [figures] = await measureTogether([{ url, pid: targetPid }], scenario, settings);
  return figures as RunFigures;
}

/**
 * Loads several targets at the same time, each with its own `connections`, and returns their
 * figures in order. This process's CPU time is shared out among them by their responses.
 *
 * The figures come from a window of `seconds` that opens once every autocannon instance is set up:
 * setting one up builds every request of every connection synchronously (for the get scenario,
 * 100,000 request buffers), which would otherwise stall the instances already running.
 */
export async function measureTogether(
  targets: readonly LoadTarget[],
  scenario: Scenario,
  settings: LoadSettings,
): Promise<RunFigures[]> {
  const loads = targets.map((target) => startAutocannon(target.url, scenario, settings));
  for (const load of loads) load.counting = true;
  const targetCpuBefore = targets.map((target) => cpuSecondsOf(target.pid));
  const ownCpuBefore = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const wallBefore = performance.now();
  await sleep(settings.seconds * 1000);
  for (const load of loads) load.counting = false;
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const targetCpuSeconds = targets.map((target, index) => {
    const before = targetCpuBefore[index];
    const after = cpuSecondsOf(target.pid);
    return before === undefined || after === undefined ? undefined : after - before;
  });
  const machineAfter = machineCpuSeconds();
  for (const load of loads) load.instance.stop();
  const results = await Promise.all(loads.map((load) => load.finished));
  const ownCpuSeconds = (ownCpu.user + ownCpu.system) / 1e6;
  const percentOf = (seconds: number): number => (seconds / wallSeconds) * 100;
  const allResponses = loads.reduce((sum, load) => sum + load.latencyMicros.count, 0);
  const knownTargetSeconds = targetCpuSeconds.every((seconds) => seconds !== undefined)
    ? targetCpuSeconds.reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0)
    : undefined;
  const otherCpuPercent =
    machineBefore === undefined || machineAfter === undefined || knownTargetSeconds === undefined
      ? undefined
      : Math.max(0, percentOf(machineAfter.busy - machineBefore.busy - knownTargetSeconds - ownCpuSeconds));
  const stealCpuPercent =
    machineBefore === undefined || machineAfter === undefined
      ? undefined
      : percentOf(machineAfter.steal - machineBefore.steal);
  return loads.map(({ latencyMicros }, index) => {
    const result = results[index] as autocannon.Result;
    const statusCodes: Record<string, number> = {};
    for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
    const targetSeconds = targetCpuSeconds[index];
    const share = allResponses === 0 ? 1 / loads.length : latencyMicros.count / allResponses;
    return {
      requestsPerSecond: latencyMicros.count / wallSeconds,
      p50Ms: latencyMicros.percentile(50) / 1000,
      p99Ms: latencyMicros.percentile(99) / 1000,
      responses: latencyMicros.count,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes,
      targetCpuPercent: targetSeconds === undefined ? undefined : percentOf(targetSeconds),
      loadGeneratorCpuPercent: percentOf(ownCpuSeconds * share),
      otherCpuPercent,
      stealCpuPercent,
    };
  });
}

interface RunningLoad {
  readonly instance: autocannon.Instance;
  readonly finished: Promise<autocannon.Result>;
  /** Responses are recorded only while this is set: inside the measured window. */
  counting: boolean;
  readonly latencyMicros: RecordableHistogram;
}

function startAutocannon(url: string, scenario: Scenario, settings: LoadSettings): RunningLoad {
  const { promise: finished, resolve, reject } = Promise.withResolvers<autocannon.Result>();
  const instance = autocannon(
    {
      url,
      connections: settings.connections,
      // Stopped by the caller when its window closes; the margin covers the set-up of the others.
      duration: settings.seconds + 60,
      headers: { ...settings.headers },
      requests: scenario.requests(),
      ...(scenario.setupClient === undefined ? {} : { setupClient: scenario.setupClient }),
    },
    (error: unknown, outcome) =>
      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(outcome),
  );
  const load: RunningLoad = {
    instance,
    finished,
    counting: false,
    latencyMicros: createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 }),
  };
  instance.on('response', (_client, _statusCode, _bytes, responseTime) => {
    if (load.counting) load.latencyMicros.record(Math.max(1, Math.round(responseTime * 1000)));
  });
  return load;
}
