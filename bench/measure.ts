import autocannon from 'autocannon';
import { createHistogram } from 'node:perf_hooks';
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

/**
 * Runs autocannon for `seconds` against `url`. Latency is recorded here from every response's own
 * timing (autocannon's histogram has whole-millisecond resolution, too coarse for a 1 ms answer).
 */
export async function measure(url: string, targetPid: number, scenario: Scenario, settings: LoadSettings): Promise<RunFigures> {
  const latencyMicros = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  const targetCpuBefore = cpuSecondsOf(targetPid);
  const ownCpuBefore = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const wallBefore = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: settings.connections,
        duration: settings.seconds,
        headers: { ...settings.headers },
        requests: scenario.requests(),
        ...(scenario.setupClient === undefined ? {} : { setupClient: scenario.setupClient }),
      },
      (error: unknown, outcome) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(outcome)),
    );
    instance.on('response', (_client, _statusCode, _bytes, responseTime) => {
      latencyMicros.record(Math.max(1, Math.round(responseTime * 1000)));
    });
  });
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const targetCpuAfter = cpuSecondsOf(targetPid);
  const machineAfter = machineCpuSeconds();
  const ownCpuSeconds = (ownCpu.user + ownCpu.system) / 1e6;
  const targetCpuSeconds = targetCpuBefore === undefined || targetCpuAfter === undefined ? undefined : targetCpuAfter - targetCpuBefore;
  const percentOf = (seconds: number): number => (seconds / wallSeconds) * 100;
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: latencyMicros.percentile(50) / 1000,
    p99Ms: latencyMicros.percentile(99) / 1000,
    responses: latencyMicros.count,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    targetCpuPercent: targetCpuSeconds === undefined ? undefined : percentOf(targetCpuSeconds),
    loadGeneratorCpuPercent: percentOf(ownCpuSeconds),
    otherCpuPercent:
      machineBefore === undefined || machineAfter === undefined || targetCpuSeconds === undefined
        ? undefined
        : Math.max(0, percentOf(machineAfter.busy - machineBefore.busy - targetCpuSeconds - ownCpuSeconds)),
    stealCpuPercent: machineBefore === undefined || machineAfter === undefined ? undefined : percentOf(machineAfter.steal - machineBefore.steal),
  };
}
