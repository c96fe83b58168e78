import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cpuRatios,
  formatPeakRss,
  formatScenario,
  median,
  medianFigures,
  pairedRatio,
  throughputRatio,
  type RunFigures,
} from '../../bench/report.ts';

function run(requestsPerSecond: number, p50Ms = 1, p99Ms = 4): RunFigures {
  return { requestsPerSecond, p50Ms, p99Ms };
}

function runWithCpu(requestsPerSecond: number, cpuMicrosPerRequest: number): RunFigures {
  return { requestsPerSecond, p50Ms: 1, p99Ms: 4, cpuMicrosPerRequest };
}

/** One round of each target, at these requests a second, in the order given. */
function oneRoundEach(throughputs: Record<string, number>): Array<{ target: string; runs: RunFigures[] }> {
  return Object.entries(throughputs).map(([target, requestsPerSecond]) => ({ target, runs: [run(requestsPerSecond)] }));
}

describe('bench report', () => {
  it('takes the middle value, or the mean of the two middle ones, whatever the order', () => {
    assert.equal(median([30, 10, 20]), 20);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([7]), 7);
    assert.throws(() => median([]), RangeError);
  });

  it('takes each figure’s median on its own, so one slow round moves none of them', () => {
    const figures = medianFigures([run(1000, 1.2, 5), run(400, 3, 30), run(900, 1.1, 4)]);
    assert.deepEqual(figures, { requestsPerSecond: 900, p50Ms: 1.2, p99Ms: 5 });
  });

  it('gives ratios of median throughputs', () => {
    const bare = [run(2000), run(1000), run(1800)];
    const service = [run(900), run(500), run(1000)];
    assert.equal(throughputRatio(service, bare), 0.5);
  });

  it('pairs rounds: a slow round slows both targets and leaves its ratio alone', () => {
    // The medians come from different rounds: they hide that current led by 10% in two rounds of three.
    const baseline = [run(1000), run(2000), run(1500)];
    const current = [run(1100), run(2200), run(1300)];
    assert.equal(throughputRatio(current, baseline), 1300 / 1500);
    assert.equal(pairedRatio(current, baseline), 1.1);
  });

  it('prints the ratio to bare per target, and current/baseline when both ran', () => {
    const table = formatScenario('GET /v1/pets?limit=20', [
      { target: 'bare', runs: [run(2000), run(2200), run(1800)] },
      { target: 'baseline', runs: [run(1000), run(900), run(1100)] },
      { target: 'current', runs: [run(1100), run(1000), run(1200)] },
    ]);
    const lines = table.split('\n');
    assert.equal(lines[0], 'GET /v1/pets?limit=20 (medians of 3 rounds)');
    assert.match(lines[2] ?? '', /^bare\s+2,000\s+1\.00\s+4\.00\s+1\.00$/);
    assert.match(lines[3] ?? '', /^baseline\s+1,000 .* 0\.50$/);
    assert.match(lines[4] ?? '', /^current\s+1,100 .* 0\.55$/);
    assert.equal(lines[5], "current/baseline req/s: 1.100 (ratio of medians), 1.100 (median of the rounds' ratios)");
  });

  it('sets the service beside Express and Fastify’s hello world, by medians and by rounds', () => {
    const table = formatScenario('GET /v1/pets/{id}', [
      { target: 'bare', runs: [run(4000), run(4000), run(4000)] },
      { target: 'fastify-hello', runs: [run(3000), run(2000), run(2500)] },
      { target: 'express', runs: [run(1000), run(2000), run(1500)] },
      { target: 'service', runs: [run(1500), run(2400), run(1500)] },
    ]);
    const lines = table.split('\n');
    assert.match(lines[3] ?? '', /^fastify-hello\s+2,500 .* 0\.63$/);
    assert.match(lines[4] ?? '', /^express\s+1,500 .* 0\.38$/);
    assert.equal(lines[6], "service/express req/s: 1.000 (ratio of medians), 1.200 (median of the rounds' ratios)");
    assert.equal(
      lines[7],
      "service/fastify-hello req/s: 0.600 (ratio of medians), 0.600 (median of the rounds' ratios)",
    );
    assert.equal(lines.length, 8);
  });

  it('sets the service beside the Fastify-typical app first, without its log and with it, then the others', () => {
    const table = formatScenario(
      'GET /v1/pets/{id}',
      oneRoundEach({
        bare: 4000,
        'fastify-hello': 3000,
        'fastify-typical': 2000,
        'fastify-typical-log': 1000,
        express: 800,
        service: 2200,
      }),
    );
    const comparisons = table.split('\n').slice(8);
    assert.deepEqual(
      comparisons.map((line) => line.split(' req/s')[0]),
      ['service/fastify-typical', 'service/fastify-typical-log', 'service/express', 'service/fastify-hello'],
    );
    assert.match(comparisons[0] ?? '', /: 1\.100 \(ratio of medians\)/);
  });

  it('names the current commit in compare mode: current/baseline, then current/express', () => {
    const table = formatScenario(
      'POST /v1/pets',
      oneRoundEach({ bare: 2000, express: 500, baseline: 1000, current: 1100 }),
    );
    const comparisons = table.split('\n').slice(6);
    assert.deepEqual(comparisons, [
      "current/baseline req/s: 1.100 (ratio of medians), 1.100 (median of the rounds' ratios)",
      "current/express req/s: 2.200 (ratio of medians), 2.200 (median of the rounds' ratios)",
    ]);
  });

  it('names several earlier commits by their commits, each compared in the order they ran', () => {
    const table = formatScenario(
      'GET /v1/pets/{id}',
      oneRoundEach({ bare: 2000, express: 400, '83017fd': 1000, '642166c': 800, current: 1200 }),
    );
    const comparisons = table.split('\n').slice(7);
    assert.deepEqual(comparisons, [
      "current/83017fd req/s: 1.200 (ratio of medians), 1.200 (median of the rounds' ratios)",
      "current/642166c req/s: 1.500 (ratio of medians), 1.500 (median of the rounds' ratios)",
      "current/express req/s: 3.000 (ratio of medians), 3.000 (median of the rounds' ratios)",
    ]);
  });

  it('prints each target’s peak RSS in MiB, and says when it could not be read', () => {
    const text = formatPeakRss([
      { target: 'bare', peakRssBytes: 50 * 1024 * 1024 },
      { target: 'express', peakRssBytes: 123.45 * 1024 * 1024 },
      { target: 'service', peakRssBytes: undefined },
    ]);
    assert.deepEqual(text.split('\n'), [
      'Peak RSS over warm-up and rounds (VmHWM, MiB)',
      `${'bare'.padEnd(20)}     50.0`,
      `${'express'.padEnd(20)}    123.5`,
      `${'service'.padEnd(20)}  unknown`,
    ]);
  });

  it('adds the CPU per request of each target and the service’s CPU ratios when every round read them', () => {
    const table = formatScenario('GET /v1/pets/{id}, every id in turn', [
      { target: 'bare', runs: [runWithCpu(4000, 20), runWithCpu(4400, 22), runWithCpu(3600, 18)] },
      { target: 'baseline', runs: [runWithCpu(1000, 60), runWithCpu(1100, 50), runWithCpu(900, 70)] },
      { target: 'current', runs: [runWithCpu(1200, 66), runWithCpu(1000, 55), runWithCpu(1100, 63)] },
    ]);
    const lines = table.split('\n');
    assert.match(lines[1] ?? '', /ratio to bare\s+CPU µs\/req$/);
    assert.match(lines[2] ?? '', /^bare\s+4,000\s+1\.00\s+4\.00\s+1\.00\s+20\.0$/);
    assert.match(lines[3] ?? '', /^baseline\s+1,000 .* 0\.25\s+60\.0$/);
    assert.match(lines[4] ?? '', /^current\s+1,100 .* 0\.28\s+63\.0$/);
    assert.deepEqual(lines.slice(5), [
      "current/baseline req/s: 1.100 (ratio of medians), 1.200 (median of the rounds' ratios)",
      "current/baseline CPU per request: 1.050 (ratio of medians), 1.100 (median of the rounds' ratios)",
    ]);
  });

  it('says which target’s CPU could not be read, and gives no CPU ratio with it', () => {
    const table = formatScenario('POST /v1/pets', [
      { target: 'bare', runs: [runWithCpu(2000, 25)] },
      { target: 'express', runs: [run(500)] },
      { target: 'service', runs: [runWithCpu(1000, 50)] },
    ]);
    const lines = table.split('\n');
    assert.match(lines[3] ?? '', /^express\s+500 .* 0\.25\s+unknown$/);
    assert.deepEqual(lines.slice(5), [
      "service/express req/s: 2.000 (ratio of medians), 2.000 (median of the rounds' ratios)",
    ]);
    assert.equal(cpuRatios([runWithCpu(1, 10), run(1)], [runWithCpu(1, 10), runWithCpu(1, 10)]), undefined);
  });
});
