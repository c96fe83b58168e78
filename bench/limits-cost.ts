import type { ChildServer } from './child-process.ts';
import { measureTogether, type LoadSettings, type RunFigures } from './measure.ts';
import type { Scenario, ScenarioName } from './scenarios.ts';

/** Runs of the service and of the service without its limits step, taken at the same time, paired by index. */
export interface PairedRuns {
  readonly service: RunFigures[];
  readonly unlimited: RunFigures[];
}

export interface LimitsCostOptions {
  /** Starts a fresh pair of processes: the service, and the same service without its limits step. */
  readonly startPair: (invocation: number) => Promise<{ service: ChildServer; unlimited: ChildServer }>;
  readonly scenarios: readonly Scenario[];
  readonly load: LoadSettings;
  readonly invocations: number;
  readonly runsPerInvocation: number;
  readonly seconds: number;
  /** Load before the first scenario's runs in a fresh pair of processes, and before each later scenario's. */
  readonly startWarmupSeconds: number;
  readonly warmupSeconds: number;
  readonly onRun: (
    scenario: Scenario,
    invocation: number,
    run: number,
    service: RunFigures,
    unlimited: RunFigures,
  ) => void;
}

/**
 * The limits step costs around ten percent; on this kind of VM that is below two other effects,
 * which this design cancels rather than averages:
 * - the machine's speed drifts by tens of percent from second to second (hypervisor steal), so
 *   the two variants are loaded at the same time, sharing the same CPUs: drift slows both alike;
 * - one process of a variant can run 15–20% slower than another process of the same code (what
 *   the JIT happened to optimise while warming up), so each invocation starts a fresh pair, and
 *   the cost is the median over several invocations;
 * - a fresh process keeps compiling for several seconds under load, the variant with more code
 *   for longer, so the first scenario of a pair is measured only after a longer warm-up.
 * Its A/A calibration (BENCH_LIMITS_AA=1, the variant without limits against itself) measured
 * −0.1%, 0.3% and 0.0% for list, get and post over 10 invocations, with intervals 5–8 points wide;
 * before the warm-ups (this one and src/main.ts's) they were 10–25 points wide.
 */
export async function measureLimitsCost(options: LimitsCostOptions): Promise<Map<ScenarioName, PairedRuns>> {
  const results = new Map<ScenarioName, PairedRuns>(
    options.scenarios.map((scenario) => [scenario.name, { service: [], unlimited: [] }]),
  );
  for (let invocation = 1; invocation <= options.invocations; invocation += 1) {
    const { service, unlimited } = await options.startPair(invocation);
    try {
      // Which load is set up first, and so which connections are served first, alternates between
      // invocations: in an A/A calibration the first-placed side came out a few percent apart.
      const serviceFirst = invocation % 2 === 1;
      const targets = serviceFirst ? [service, unlimited] : [unlimited, service];
      for (const [index, scenario] of options.scenarios.entries()) {
        const warmupSeconds = index === 0 ? options.startWarmupSeconds : options.warmupSeconds;
        if (warmupSeconds > 0) await measureTogether(targets, scenario, { ...options.load, seconds: warmupSeconds });
        for (let run = 1; run <= options.runsPerInvocation; run += 1) {
          const [first, second] = (await measureTogether(targets, scenario, {
            ...options.load,
            seconds: options.seconds,
          })) as [RunFigures, RunFigures];
          const [withLimits, without] = serviceFirst ? [first, second] : [second, first];
          const paired = results.get(scenario.name) as PairedRuns;
          paired.service.push(withLimits);
          paired.unlimited.push(without);
          options.onRun(scenario, invocation, run, withLimits, without);
        }
      }
    } finally {
      await Promise.all([service.stop(), unlimited.stop()]);
    }
  }
  return results;
}

/**
 * Where the limits phase runs when no placement was asked for: both servers on the last CPU,
 * the load generator on the others. Sharing CPUs with the servers, the load generator's own work
 * would count in the cost: autocannon parses every response with a JavaScript HTTP parser, so
 * five more header lines cost it CPU too, which the scheduler then takes from the servers.
 * Undefined on one CPU.
 */
export function dedicatedCpus(cpuCount: number): { servers: string; loadGenerator: string } | undefined {
  if (cpuCount < 2) return undefined;
  return { servers: String(cpuCount - 1), loadGenerator: cpuCount === 2 ? '0' : `0-${cpuCount - 2}` };
}
