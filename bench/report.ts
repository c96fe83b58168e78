/** What one round of one scenario measured against one target. */
export interface RunFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** A target's runs of one scenario, one per round. */
export interface TargetRuns {
  readonly target: string;
  readonly runs: readonly RunFigures[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('the median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}

/** Each figure's own median over the rounds (the three may come from different rounds). */
export function medianFigures(runs: readonly RunFigures[]): RunFigures {
  return {
    requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
  };
}

/** The ratio of two targets' median throughputs. */
export function throughputRatio(of: readonly RunFigures[], to: readonly RunFigures[]): number {
  return medianFigures(of).requestsPerSecond / medianFigures(to).requestsPerSecond;
}

/** A table of one scenario: medians per target, the ratio to `bare`, and current/baseline when both ran. */
export function formatScenario(title: string, targets: readonly TargetRuns[]): string {
  const bare = targets.find((entry) => entry.target === 'bare');
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare'];
  const rows = targets.map(({ target, runs }) => {
    const figures = medianFigures(runs);
    return [
      target,
      Math.round(figures.requestsPerSecond).toLocaleString('en-US'),
      figures.p50Ms.toFixed(2),
      figures.p99Ms.toFixed(2),
      bare === undefined ? '' : throughputRatio(runs, bare.runs).toFixed(2),
    ];
  });
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ');
  const lines = [`${title} (median of ${bare?.runs.length ?? 0} rounds)`, line(header), ...rows.map(line)];
  const current = targets.find((entry) => entry.target === 'current');
  const baseline = targets.find((entry) => entry.target === 'baseline');
  if (current !== undefined && baseline !== undefined) {
    lines.push(`current/baseline req/s: ${throughputRatio(current.runs, baseline.runs).toFixed(3)}`);
  }
  return lines.join('\n');
}
