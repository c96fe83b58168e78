import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { TallyCounter } from '../src/http/tally-counter.ts';

/** The counter behind petstore_http_requests_total and petstore_deprecated_calls_total (README, "Operations"). */

async function valuesOf(counter: TallyCounter<string>): Promise<Array<{ labels: object; value: number }>> {
  const { values } = await counter.counter.get();
  return values.map(({ labels, value }) => ({ labels, value })).sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}

describe('TallyCounter', () => {
  it('counts by every combination of three label values', async () => {
    const counter = new TallyCounter({ name: 'requests_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [new Registry()] });
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
    const counter = new TallyCounter({ name: 'calls_total', help: 'Calls.', labelNames: ['account'], registers: [registry] });
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
    const counter = new TallyCounter({ name: 'pairs_total', help: 'h', labelNames: ['a', 'b'], registers: [new Registry()] });
    counter.inc('x', 'y');
    counter.inc('x', 'z');
    counter.inc('x', 'y');
    assert.deepEqual(await valuesOf(counter), [
      { labels: { a: 'x', b: 'y' }, value: 2 },
      { labels: { a: 'x', b: 'z' }, value: 1 },
    ]);
  });
});
