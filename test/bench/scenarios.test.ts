import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildScenarios, seededRandom, zipfPositions } from '../../bench/load.ts';
import { loadSettings, SCENARIO_NAMES } from '../../bench/settings.ts';

const ids = Array.from({ length: 10_000 }, (_, index) => String(index + 1));

describe('bench scenarios', () => {
  it('runs every scenario by default, and refuses an unknown one', () => {
    assert.deepEqual(loadSettings([], {}).scenarios, SCENARIO_NAMES);
    assert.deepEqual(loadSettings([], { BENCH_SCENARIOS: 'get-zipf, get-all' }).scenarios, ['get-all', 'get-zipf']);
    assert.throws(() => loadSettings([], { BENCH_SCENARIOS: 'get-some' }), /unknown get-some/);
  });

  it('walks every id of the store once, in order, in get-all', () => {
    const [walk] = buildScenarios(['get-all'], ids.length);
    const paths = walk?.requests(ids).map((request) => request.path);
    assert.deepEqual(
      paths,
      ids.map((id) => `/v1/pets/${id}`),
    );
  });

  it('draws the same Zipf-skewed ids on every run, the most popular about 1/H(n) of them', () => {
    const drawn = zipfPositions(10_000, 20_000, 1, 7);
    assert.deepEqual(drawn, zipfPositions(10_000, 20_000, 1, 7));
    assert.notDeepEqual(drawn.slice(0, 100), zipfPositions(10_000, 20_000, 1, 8).slice(0, 100));
    assert.ok(drawn.every((position) => Number.isInteger(position) && position >= 0 && position < 10_000));
    const counts = new Map<number, number>();
    for (const position of drawn) counts.set(position, (counts.get(position) ?? 0) + 1);
    const sorted = [...counts.values()].sort((a, b) => b - a);
    const share = (top: number) => sorted.slice(0, top).reduce((sum, count) => sum + count, 0) / drawn.length;
    // H(10,000) ≈ 9.79: the first rank takes about 10%, the first 100 about 53%.
    assert.ok(Math.abs(share(1) - 0.102) < 0.015, `top 1: ${share(1)}`);
    assert.ok(Math.abs(share(100) - 0.53) < 0.03, `top 100: ${share(100)}`);
    // The popular pets are scattered over the store, not its first ids.
    const hottest = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
    assert.ok(hottest.some(([position]) => position >= 1000));
  });

  it('builds the Zipf scenario from seeded draws, so every target gets the same request list', () => {
    const [first] = buildScenarios(['get-zipf'], ids.length);
    const [second] = buildScenarios(['get-zipf'], ids.length);
    assert.deepEqual(first?.requests(ids), second?.requests(ids));
    const paths = first?.requests(ids).map((request) => request.path) ?? [];
    assert.equal(paths.length, 100_000);
    // Long enough to reach the tail: more distinct pets than the service's cache holds (about 6,700).
    assert.ok(new Set(paths).size > 8000, `${new Set(paths).size} distinct`);
  });

  it('draws uniform numbers in [0, 1) from a seed', () => {
    const random = seededRandom(42);
    const values = Array.from({ length: 10_000 }, random);
    assert.ok(values.every((value) => value >= 0 && value < 1));
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    assert.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`);
  });
});
