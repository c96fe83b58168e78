/** What one round of one scenario measured against one target. */
export interface RunFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The target process's CPU time (all threads, user and system) per response; undefined where unknown. */
  readonly cpuMicrosPerRequest?: number | undefined;
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

/** Each figure's own median over the rounds (they may come from different rounds); CPU only if every round read it. */
export function medianFigures(runs: readonly RunFigures[]): RunFigures {
  const figures = {
    requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
  };
  const cpu = cpuFigures(runs);
  return cpu === undefined ? figures : { ...figures, cpuMicrosPerRequest: median(cpu) };
}

/** Each round's CPU per request, or undefined if any round could not read it. */
function cpuFigures(runs: readonly RunFigures[]): number[] | undefined {
  const cpu = runs.map((run) => run.cpuMicrosPerRequest);
  return cpu.every((value) => value !== undefined) ? cpu : undefined;
}

/** The ratio of two targets' median throughputs. */
export function throughputRatio(of: readonly RunFigures[], to: readonly RunFigures[]): number {
  return medianFigures(of).requestsPerSecond / medianFigures(to).requestsPerSecond;
}

/**
 * The median of the rounds' own ratios. Within a round the two targets run seconds apart, so a
 * slow patch of the machine touches both; across rounds it does not, which the ratio of medians
 * (throughputRatio) cannot tell from a real difference.
 */
export function pairedRatio(of: readonly RunFigures[], to: readonly RunFigures[]): number {
  return median(of.map((run, round) => run.requestsPerSecond / (to[round] as RunFigures).requestsPerSecond));
}

/**
 * CPU per request of `of` over `to`, as the ratio of medians and the median of the rounds' ratios;
 * undefined unless both read it in every round. Below 1, `of` spends less of the machine per request.
 */
export function cpuRatios(of: readonly RunFigures[], to: readonly RunFigures[]) {
  const [mine, theirs] = [cpuFigures(of), cpuFigures(to)];
  if (mine === undefined || theirs === undefined || mine.length !== theirs.length) return undefined;
  return {
    ofMedians: median(mine) / median(theirs),
    ofRounds: median(mine.map((value, round) => value / (theirs[round] as number))),
  };
}

const WIDTHS = [20, 8, 8, 8, 14, 12];
const line = (cells: readonly string[]): string =>
  cells
    .map((cell, column) => (column === 0 ? cell.padEnd(WIDTHS[0] ?? 20) : cell.padStart(WIDTHS[column] ?? 8)))
    .join(' ');

/** The stacks the service is set beside, after the earlier commits (every other target but `bare`). */
const STACKS = ['fastify-typical', 'fastify-typical-log', 'express', 'fastify-hello'];

/**
 * A table of one scenario: medians per target, the ratio to `bare`, the CPU per request where it was
 * read, and the service's ratio to each earlier commit and other stack that ran (`current/baseline`,
 * `service/express`…): of the medians, and the median of the rounds'.
 */
export function formatScenario(title: string, targets: readonly TargetRuns[]): string {
  const runsOf = (name: string) => targets.find(({ target }) => target === name)?.runs;
  const bare = runsOf('bare');
  const withCpu = targets.some(({ runs }) => cpuFigures(runs) !== undefined);
  const rows = targets.map(({ target, runs }) => {
    const { requestsPerSecond, p50Ms, p99Ms, cpuMicrosPerRequest } = medianFigures(runs);
    const ratio = bare === undefined ? '' : throughputRatio(runs, bare).toFixed(2);
    const cpu = withCpu ? [cpuMicrosPerRequest === undefined ? 'unknown' : cpuMicrosPerRequest.toFixed(1)] : [];
    return line([
      target,
      Math.round(requestsPerSecond).toLocaleString('en-US'),
      p50Ms.toFixed(2),
      p99Ms.toFixed(2),
      ratio,
      ...cpu,
    ]);
  });
  const header = [
    `${title} (medians of ${targets[0]?.runs.length ?? 0} rounds)`,
    line(['target', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', ...(withCpu ? ['CPU µs/req'] : [])]),
  ];
  const serviceName = runsOf('current') === undefined ? 'service' : 'current';
  const service = runsOf(serviceName);
  const others = targets.map(({ target }) => target).filter((name) => name !== 'bare' && name !== serviceName);
  const references = [...others.filter((name) => !STACKS.includes(name)), ...STACKS];
  const comparisons = references.flatMap((reference) => {
    const other = runsOf(reference);
    if (service === undefined || other === undefined) return [];
    const cpu = cpuRatios(service, other);
    return [
      `${serviceName}/${reference} req/s: ${throughputRatio(service, other).toFixed(3)} (ratio of medians), ` +
        `${pairedRatio(service, other).toFixed(3)} (median of the rounds' ratios)`,
      ...(cpu === undefined
        ? []
        : [
            `${serviceName}/${reference} CPU per request: ${cpu.ofMedians.toFixed(3)} (ratio of medians), ` +
              `${cpu.ofRounds.toFixed(3)} (median of the rounds' ratios)`,
          ]),
    ];
  });
  return [...header, ...rows, ...comparisons].join('\n');
}

/** A target's peak resident memory over the measured rounds, in bytes; undefined where it could not be read. */
export interface TargetMemory {
  readonly target: string;
  readonly peakRssBytes: number | undefined;
}

/** One line per target: its peak RSS in MiB. */
export function formatPeakRss(targets: readonly TargetMemory[]): string {
  const rows = targets.map(({ target, peakRssBytes }) =>
    [
      target.padEnd(WIDTHS[0] ?? 20),
      (peakRssBytes === undefined ? 'unknown' : (peakRssBytes / 1024 / 1024).toFixed(1)).padStart(8),
    ].join(' '),
  );
  return ['Peak RSS over warm-up and rounds (VmHWM, MiB)', ...rows].join('\n');
}
