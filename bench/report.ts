import type { RunFigures } from './measure.ts';
import type { Scenario } from './scenarios.ts';

export interface TargetSummary {
  /** Medians over the rounds. */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly targetCpuPercent: number | undefined;
  readonly loadGeneratorCpuPercent: number;
  /** Highest CPU use by anything else during any run, in % of one core: a noisy neighbour shows here. */
  readonly maxOtherCpuPercent: number | undefined;
  readonly runs: readonly RunFigures[];
}

export type Verdict = 'PASS' | 'BELOW';

export interface ScenarioSummary {
  readonly name: string;
  readonly title: string;
  readonly service: TargetSummary;
  readonly bare: TargetSummary;
  /** Median service req/s over median bare req/s. */
  readonly ratio: number;
  readonly target: number;
  readonly verdict: Verdict;
  /** Body size in bytes of the service's answer, which the bare server's answer matches. */
  readonly responseBytes: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function maxOf(values: ReadonlyArray<number | undefined>): number | undefined {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
}

export function summarizeTarget(runs: readonly RunFigures[]): TargetSummary {
  const cpu = runs.map((run) => run.targetCpuPercent).filter((value): value is number => value !== undefined);
  return {
    requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    targetCpuPercent: cpu.length === runs.length ? median(cpu) : undefined,
    loadGeneratorCpuPercent: median(runs.map((run) => run.loadGeneratorCpuPercent)),
    maxOtherCpuPercent: maxOf(runs.map((run) => run.otherCpuPercent)),
    runs,
  };
}

export function summarizeScenario(
  scenario: Scenario,
  responseBytes: number,
  service: readonly RunFigures[],
  bare: readonly RunFigures[],
): ScenarioSummary {
  const serviceSummary = summarizeTarget(service);
  const bareSummary = summarizeTarget(bare);
  const ratio = serviceSummary.requestsPerSecond / bareSummary.requestsPerSecond;
  return {
    name: scenario.name,
    title: scenario.title,
    service: serviceSummary,
    bare: bareSummary,
    ratio,
    target: scenario.target,
    verdict: ratio >= scenario.target ? 'PASS' : 'BELOW',
    responseBytes,
  };
}

/** What the limits step (rate limiting and its headers) costs: the service against itself without it. */
export interface LimitsCost {
  readonly title: string;
  /** Runs, each loading both variants at once. */
  readonly runs: number;
  readonly serviceRequestsPerSecond: number;
  readonly unlimitedRequestsPerSecond: number;
  /**
   * 1 - service/unlimited, the median over the runs of each run's ratio: both variants are loaded
   * at once in a run, so a machine that drifts slows both alike.
   */
  readonly cost: number;
  /** A distribution-free confidence interval of that median (see medianInterval). */
  readonly costInterval: MedianInterval;
  /**
   * The same from the service's CPU time per request (1 - unlimited/service): what the step costs
   * the service's own capacity, whatever the load generator spends.
   */
  readonly cpuCost: number | undefined;
  /** Medians of CPU time per request, in microseconds. */
  readonly serviceCpuMicros: number | undefined;
  readonly unlimitedCpuMicros: number | undefined;
  /**
   * Median CPU use of both variants together, in % of one core: well below 100 (on their one
   * CPU), they were not the bottleneck, and the cost then mixes in the load generator's.
   */
  readonly serversCpuPercent: number | undefined;
  readonly target: number;
  readonly verdict: Verdict;
}

export interface MedianInterval {
  readonly low: number;
  readonly high: number;
  /** Probability that the interval holds the true median; below 0.95 when there are too few pairs. */
  readonly confidence: number;
}

/**
 * The order-statistic confidence interval of a median: with n samples sorted, [x(k), x(n+1-k)] holds
 * the true median with probability 1 - 2·P(Binomial(n, 1/2) < k). k is the largest with that at
 * least 95%; with fewer than 6 samples none is, and the interval is the whole range.
 */
export function medianInterval(values: readonly number[]): MedianInterval {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN, confidence: 0 };
  let k = 1;
  let below = 0.5 ** n; // P(X < 1)
  let tail = below;
  while (k < n / 2) {
    below = (below * (n - k + 1)) / k; // P(X = k)
    if (2 * (tail + below) > 0.05) break;
    tail += below;
    k += 1;
  }
  return { low: sorted[k - 1] as number, high: sorted[n - k] as number, confidence: 1 - 2 * tail };
}

const microsPerRequest = (cpuPercent: number | undefined, requestsPerSecond: number): number | undefined =>
  cpuPercent === undefined || requestsPerSecond <= 0 ? undefined : (cpuPercent * 10_000) / requestsPerSecond;

export function summarizeLimitsCost(
  scenario: Scenario,
  service: readonly RunFigures[],
  unlimited: readonly RunFigures[],
  target: number,
): LimitsCost {
  const pairs = Math.min(service.length, unlimited.length);
  const costs: number[] = [];
  const cpuCosts: number[] = [];
  for (let index = 0; index < pairs; index += 1) {
    const withLimits = service[index] as RunFigures;
    const without = unlimited[index] as RunFigures;
    costs.push(1 - withLimits.requestsPerSecond / without.requestsPerSecond);
    const withMicros = microsPerRequest(withLimits.targetCpuPercent, withLimits.requestsPerSecond);
    const withoutMicros = microsPerRequest(without.targetCpuPercent, without.requestsPerSecond);
    if (withMicros !== undefined && withoutMicros !== undefined) cpuCosts.push(1 - withoutMicros / withMicros);
  }
  const cost = median(costs);
  const medianMicros = (runs: readonly RunFigures[]): number | undefined => {
    const known = runs
      .map((run) => microsPerRequest(run.targetCpuPercent, run.requestsPerSecond))
      .filter((value): value is number => value !== undefined);
    return known.length === runs.length && known.length > 0 ? median(known) : undefined;
  };
  const together = service.map(
    (run, index) => (run.targetCpuPercent ?? Number.NaN) + (unlimited[index]?.targetCpuPercent ?? Number.NaN),
  );
  return {
    title: scenario.title,
    runs: pairs,
    serviceRequestsPerSecond: median(service.map((run) => run.requestsPerSecond)),
    unlimitedRequestsPerSecond: median(unlimited.map((run) => run.requestsPerSecond)),
    cost,
    costInterval: medianInterval(costs),
    cpuCost: cpuCosts.length === pairs && pairs > 0 ? median(cpuCosts) : undefined,
    serviceCpuMicros: medianMicros(service),
    unlimitedCpuMicros: medianMicros(unlimited),
    serversCpuPercent: together.every(Number.isFinite) && together.length > 0 ? median(together) : undefined,
    target,
    verdict: cost <= target ? 'PASS' : 'BELOW',
  };
}

export function formatLimitsCost(costs: readonly LimitsCost[], placement: string): string {
  const header = [
    'scenario',
    'runs',
    'service req/s',
    'without limits',
    'cost',
    '95% interval',
    'CPU/req with … without',
    'CPU cost',
    'target',
    'verdict',
  ];
  const rows = costs.map((cost) => [
    cost.title,
    String(cost.runs),
    round(cost.serviceRequestsPerSecond, 0),
    round(cost.unlimitedRequestsPerSecond, 0),
    `${round(cost.cost * 100, 1)}%`,
    `${round(cost.costInterval.low * 100, 1)}% … ${round(cost.costInterval.high * 100, 1)}%${cost.costInterval.confidence < 0.95 ? ` (${Math.round(cost.costInterval.confidence * 100)}%)` : ''}`,
    `${micros(cost.serviceCpuMicros)} … ${micros(cost.unlimitedCpuMicros)}`,
    cost.cpuCost === undefined ? 'n/a' : `${round(cost.cpuCost * 100, 1)}%`,
    `<= ${Math.round(cost.target * 100)}%`,
    cost.verdict,
  ]);
  const idle = costs.filter(
    (cost) => cost.serversCpuPercent !== undefined && cost.serversCpuPercent < SATURATED_PERCENT,
  );
  const note =
    idle.length === 0
      ? ''
      : `\nNOTE: the two servers used less than ${SATURATED_PERCENT}% of a core together during ${idle.map((cost) => cost.title).join(', ')}: ` +
        'they were not the bottleneck there, so that cost includes waiting on the load generator.';
  return (
    `Cost of the limits step (rate limiting and its five headers): the service against itself without it, both loaded at once, ` +
    `fresh processes for each invocation; ${placement}; medians over the runs, CPU in µs per request:\n${grid(header, rows)}${note}`
  );
}

/** CPU use of the two servers together, in % of one core, below which they were not what limited throughput. */
const SATURATED_PERCENT = 80;
const micros = (value: number | undefined): string => (value === undefined ? 'n/a' : value.toFixed(1));

const round = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const percent = (value: number | undefined): string => (value === undefined ? 'n/a' : `${Math.round(value)}%`);

export function formatTable(summaries: readonly ScenarioSummary[]): string {
  const header = [
    'scenario',
    'service req/s',
    'p50 ms',
    'p99 ms',
    'bare req/s',
    'p50 ms',
    'p99 ms',
    'ratio',
    'target',
    'verdict',
  ];
  const rows = summaries.map((summary) => [
    summary.title,
    round(summary.service.requestsPerSecond, 0),
    round(summary.service.p50Ms, 2),
    round(summary.service.p99Ms, 2),
    round(summary.bare.requestsPerSecond, 0),
    round(summary.bare.p50Ms, 2),
    round(summary.bare.p99Ms, 2),
    round(summary.ratio, 2),
    `>= ${summary.target.toFixed(2)}`,
    summary.verdict,
  ]);
  const cpuHeader = [
    'scenario',
    'service',
    'load gen',
    'others (max)',
    'bare',
    'load gen',
    'others (max)',
    'body bytes',
  ];
  const cpuRows = summaries.map((summary) => [
    summary.title,
    percent(summary.service.targetCpuPercent),
    percent(summary.service.loadGeneratorCpuPercent),
    percent(summary.service.maxOtherCpuPercent),
    percent(summary.bare.targetCpuPercent),
    percent(summary.bare.loadGeneratorCpuPercent),
    percent(summary.bare.maxOtherCpuPercent),
    String(summary.responseBytes),
  ]);
  return (
    `${grid(header, rows)}\n\nCPU use in % of one core (median; "others" is the most any run saw from everything else on the machine):\n` +
    grid(cpuHeader, cpuRows)
  );
}

function grid(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}
