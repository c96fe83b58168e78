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
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
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

export function summarizeScenario(scenario: Scenario, responseBytes: number, service: readonly RunFigures[], bare: readonly RunFigures[]): ScenarioSummary {
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
  readonly serviceRequestsPerSecond: number;
  readonly unlimitedRequestsPerSecond: number;
  /**
   * 1 - service/unlimited, from the median of each round's ratio: the two run back to back in a
   * round, so a machine that drifts between rounds changes both alike.
   */
  readonly cost: number;
  /** The lowest and highest of the rounds' costs: how far to trust the median on this machine. */
  readonly costRange: readonly [number, number];
  readonly target: number;
  readonly verdict: Verdict;
}

export function summarizeLimitsCost(scenario: Scenario, service: readonly RunFigures[], unlimited: readonly RunFigures[], target: number): LimitsCost {
  const ratios = service.map((run, index) => run.requestsPerSecond / (unlimited[index]?.requestsPerSecond ?? Number.NaN));
  const cost = 1 - median(ratios);
  const costs = ratios.map((ratio) => 1 - ratio);
  return {
    title: scenario.title,
    serviceRequestsPerSecond: median(service.map((run) => run.requestsPerSecond)),
    unlimitedRequestsPerSecond: median(unlimited.map((run) => run.requestsPerSecond)),
    cost,
    costRange: [Math.min(...costs), Math.max(...costs)],
    target,
    verdict: cost <= target ? 'PASS' : 'BELOW',
  };
}

export function formatLimitsCost(costs: readonly LimitsCost[]): string {
  const header = ['scenario', 'service req/s', 'without limits req/s', 'cost', 'rounds from … to', 'target', 'verdict'];
  const rows = costs.map((cost) => [
    cost.title,
    round(cost.serviceRequestsPerSecond, 0),
    round(cost.unlimitedRequestsPerSecond, 0),
    `${round(cost.cost * 100, 1)}%`,
    `${round(cost.costRange[0] * 100, 1)}% … ${round(cost.costRange[1] * 100, 1)}%`,
    `<= ${Math.round(cost.target * 100)}%`,
    cost.verdict,
  ]);
  return `Cost of the limits step (rate limiting and its headers; median of each round's ratio):\n${grid(header, rows)}`;
}

const round = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const percent = (value: number | undefined): string => (value === undefined ? 'n/a' : `${Math.round(value)}%`);

export function formatTable(summaries: readonly ScenarioSummary[]): string {
  const header = ['scenario', 'service req/s', 'p50 ms', 'p99 ms', 'bare req/s', 'p50 ms', 'p99 ms', 'ratio', 'target', 'verdict'];
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
  const cpuHeader = ['scenario', 'service', 'load gen', 'others (max)', 'bare', 'load gen', 'others (max)', 'body bytes'];
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
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}
