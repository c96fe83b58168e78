import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { TallyCounter, TallyHistogram } from '../src/http/tally-metrics.ts';

/** The metrics behind petstore_http_requests_total, _request_duration_seconds and petstore_deprecated_calls_total (README, "Operations"). */

async function valuesOf(counter: TallyCounter<string>): Promise<Array<{ labels: object; value: number }>> {
  const { values } = await counter.counter.get();
  return values
    .map(({ labels, value }) => ({ labels, value }))
    .sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}

describe('TallyCounter', () => {
  it('counts by every combination of three label values', async () => {
    const counter = new TallyCounter({
      name: 'requests_total',
      help: 'h',
      labelNames: ['method', 'route', 'status'],
      registers: [new Registry()],
    });
    counter.inc('GET', '/a', 200);
    counter.inc('GET', '/a', 200);
    counter.inc('GET', '/a', 404);
    counter.inc('POST', '/a', 200);
    counter.inc('GET', '/b', 200);
    assert.deepEqual(await valuesOf(counter), [
      { labels: { method: 'GET', route: '/a', status: 200 }, value: 2 },
      { labels: { method: 'GET', route: '/a', status: 404 }, value: 1 },
      { labels: { method: 'GET', route: '/b', status: 200 }, value: 1 },
      { labels: { method: 'POST', route: '/a', status: 200 }, value: 1 },
    ]);
  });

  it('gives prom-client only what was counted since the last scrape, so totals never double', async () => {
    const registry = new Registry();
    const counter = new TallyCounter({
      name: 'calls_total',
      help: 'Calls.',
      labelNames: ['account'],
      registers: [registry],
    });
    counter.inc('alice');
    assert.match(await registry.metrics(), /^calls_total\{account="alice"\} 1$/m);
    assert.match(await registry.metrics(), /^calls_total\{account="alice"\} 1$/m, 'a second scrape without new calls');
    counter.inc('alice');
    counter.inc('bob');
    const text = await registry.metrics();
    assert.match(text, /^# TYPE calls_total counter$/m);
    assert.match(text, /^calls_total\{account="alice"\} 2$/m);
    assert.match(text, /^calls_total\{account="bob"\} 1$/m);
  });

  it('takes two labels', async () => {
    const counter = new TallyCounter({
      name: 'pairs_total',
      help: 'h',
      labelNames: ['a', 'b'],
      registers: [new Registry()],
    });
    counter.inc('x', 'y');
    counter.inc('x', 'z');
    counter.inc('x', 'y');
    assert.deepEqual(await valuesOf(counter), [
      { labels: { a: 'x', b: 'y' }, value: 2 },
      { labels: { a: 'x', b: 'z' }, value: 1 },
    ]);
  });
});

describe('TallyHistogram', () => {
  it("exposes exactly what prom-client's own Histogram exposes for the same observations", async () => {
    const buckets = [0.001, 0.01, 0.1, 1];
    const reference = new Registry();
    const tallied = new Registry();
    const plain = new Histogram({
      name: 'duration_seconds',
      help: 'Time.',
      labelNames: ['method', 'route'],
      buckets,
      registers: [reference],
    });
    const histogram = new TallyHistogram({
      name: 'duration_seconds',
      help: 'Time.',
      labelNames: ['method', 'route'],
      buckets,
      registers: [tallied],
    });
    const observations: Array<[string, string, number]> = [
      ['GET', '/a', 0.0005],
      ['GET', '/a', 0.001],
      ['GET', '/a', 0.05],
      ['GET', '/a', 7],
      ['POST', '/a', 0.002],
      ['GET', '/b', 0.3],
    ];
    for (const [method, route, seconds] of observations) {
      plain.observe({ method, route }, seconds);
      histogram.record(method, route, seconds);
    }
    const text = await tallied.metrics();
    assert.equal(text, await reference.metrics());
    assert.match(
      text,
      /^duration_seconds_bucket\{le="0.001",method="GET",route="\/a"\} 2$/m,
      'an observation on a bound counts in that bucket',
    );
    assert.match(text, /^duration_seconds_count\{method="GET",route="\/a"\} 4$/m);
  });
});
