import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunFigures } from '../bench/measure.ts';
import { medianInterval, summarizeLimitsCost } from '../bench/report.ts';
import { buildScenarios } from '../bench/scenarios.ts';

function run(requestsPerSecond: number, targetCpuPercent: number): RunFigures {
  return {
    requestsPerSecond,
    p50Ms: 1,
    p99Ms: 2,
    responses: requestsPerSecond,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { '200': requestsPerSecond },
    targetCpuPercent,
    loadGeneratorCpuPercent: 50,
    otherCpuPercent: 0,
    stealCpuPercent: 0,
  };
}

describe('bench report: the limits step cost', () => {
  it('gives the order-statistic 95% interval of a median', () => {
    const ten = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10];
    // n = 10: [x(2), x(9)] holds the median with probability 1 - 2·11/1024.
    assert.deepEqual(medianInterval(ten), { low: 2, high: 9, confidence: 1 - 22 / 1024 });
    // n = 12: [x(3), x(10)], 1 - 2·79/4096.
    assert.deepEqual(medianInterval([...ten, 11, 12]), { low: 3, high: 10, confidence: 1 - 158 / 4096 });
    // Too few for 95%: the whole range, with the confidence it really has.
    assert.deepEqual(medianInterval([3, 1, 2, 4]), { low: 1, high: 4, confidence: 1 - 2 / 16 });
  });

  it('takes the cost from the median of the runs, each run pairing both variants loaded at once', () => {
    const [scenario] = buildScenarios(['get'], { first: 1, last: 10 });
    assert.ok(scenario);
    // Per run: the service at 90, 95 and 60 of the variant without limits (the last a disturbed run).
    const withLimits = [run(900, 45), run(1900, 47.5), run(600, 30)];
    const without = [run(1000, 45), run(2000, 47.5), run(1000, 45)];
    const cost = summarizeLimitsCost(scenario, withLimits, without, 0.1);
    assert.ok(Math.abs(cost.cost - 0.1) < 1e-9, `cost ${cost.cost}`);
    assert.equal(cost.verdict, 'PASS');
    assert.equal(cost.runs, 3);
    // CPU per request: 500 µs against 450 µs in the first run, so 10% of the service's capacity.
    assert.ok(cost.cpuCost !== undefined && Math.abs(cost.cpuCost - 0.1) < 1e-9, `cpu cost ${String(cost.cpuCost)}`);
    assert.equal(cost.serversCpuPercent, 90);
    assert.equal(summarizeLimitsCost(scenario, [run(800, 40)], [run(1000, 40)], 0.1).verdict, 'BELOW');
  });
});
