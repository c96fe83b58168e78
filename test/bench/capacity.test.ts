import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { format } from 'prettier';
import { benchmarkCommand } from '../../bench/capacity-limiter.ts';
import {
  assumptionsFrom,
  DEFAULT_ASSUMPTIONS,
  mixedRequestsPerSecond,
  sizeFor,
  sizingInputs,
  sizingTable,
  type CapacityFigures,
  type SizingInputs,
} from '../../bench/capacity-model.ts';
import { markdownTable, renderReport, textTable, wrap, type Table } from '../../bench/capacity-report.ts';
import { loadCapacitySettings } from '../../bench/capacity-settings.ts';
import { tallyCounts, tallyShape } from '../../bench/capacity-storage.ts';

const scenario = (requestsPerSecond: number) => ({ requestsPerSecond, p50Ms: 2, p99Ms: 9 });

function figures(overrides: Partial<CapacityFigures> = {}): CapacityFigures {
  return {
    machine: {
      date: '2026-11-25',
      cores: 2,
      cpuModel: 'Test CPU',
      node: 'v24.21.0',
      postgres: '15.20',
      redis: '7.0.15',
    },
    durationSeconds: 8,
    connections: 50,
    service: {
      embedded: { list: scenario(10_000), get: scenario(10_000), post: scenario(8_000) },
      postgres: { list: scenario(2_000), get: scenario(2_000), post: scenario(500) },
    },
    limiter: [
      { source: 'RedisLimiter.consume', detail: 'x', callsPerSecond: 40_000, redisCpu: 0.7 },
      { source: 'redis-benchmark EVALSHA', detail: 'y', callsPerSecond: 50_000, redisCpu: 0.95 },
    ],
    creates: [
      { stores: 1, callers: 32, createsPerSecond: 10_000 },
      { stores: 4, callers: 128, createsPerSecond: 12_000 },
    ],
    lookups: [{ connections: 1, callers: 16, lookupsPerSecond: 1_000 }],
    tally: tallyShape(1000),
    flushes: [
      { backend: 'sqlite', tally: 'typical', rows: 12_000, wallMs: 90, cpuMs: 40 },
      { backend: 'postgres', tally: 'typical', rows: 12_000, wallMs: 300, cpuMs: 80 },
      { backend: 'postgres', tally: 'bound', rows: 100_000, wallMs: 2_500, cpuMs: 900 },
    ],
    pgAvailableConnections: 97,
    ...overrides,
  };
}

const inputs: SizingInputs = {
  instanceRequestsPerSecond: 2_000,
  scriptCallsPerSecond: 50_000,
  createsPerConnection: 10_000,
  createsCeiling: 12_000,
  lookupsPerConnection: 1_000,
  flushMsPerRow: 0.025,
  tallyRows: 12_000,
  activeKeys: 2_000,
  pgAvailableConnections: 97,
};

describe('bench:capacity sizing', () => {
  it('mixes the scenarios by the time each request takes, not by averaging rates', () => {
    const service = { list: scenario(2_000), get: scenario(2_000), post: scenario(500) };
    // 45% at 0.5 ms, 45% at 0.5 ms, 10% at 2 ms: 0.65 ms a request.
    assert.equal(Math.round(mixedRequestsPerSecond(service, 0.1)), 1538);
    assert.equal(mixedRequestsPerSecond({ list: scenario(900), get: scenario(900), post: scenario(900) }, 0.3), 900);
  });

  it('sizes instances and shards by load ÷ (capacity × headroom), rounded up', () => {
    const row = sizeFor(100_000, inputs, DEFAULT_ASSUMPTIONS);
    assert.equal(row.instances, Math.ceil(100_000 / (2_000 * 0.7)));
    assert.equal(row.instances, 72);
    assert.equal(row.shards, 3);
    assert.equal(row.poolerClientConnections, 72 * 10 + 5);
    assert.ok(Math.abs(row.utilisation.instances - 100_000 / (72 * 2_000)) < 1e-12);
    assert.ok(Math.abs(row.utilisation.redis - 100_000 / (3 * 50_000)) < 1e-12);
  });

  it('counts the connections that creations, key lookups and flushes keep busy', () => {
    const row = sizeFor(100_000, inputs, DEFAULT_ASSUMPTIONS);
    const creates = 10_000 / 10_000;
    // 72 instances; a key's requests reach each at 100,000 / 72 / 2,000 a second, and after each
    // lookup the next second's are answered from the cache.
    const rate = 100_000 / 72 / 2_000;
    const lookups = (72 * 2_000 * (rate / (1 + rate))) / 1_000;
    // Each instance flushes its whole typical tally every 10 s (it answers more requests than the tally has rows).
    const flushes = (72 * 12_000 * 0.025) / 10_000;
    assert.ok(Math.abs(row.pgBusyConnections - (creates + lookups + flushes)) < 1e-9);
    assert.equal(row.pgServerConnections, Math.ceil((creates + lookups + flushes) / 0.7));
    assert.ok(Math.abs(row.utilisation['pg-creates'] - 10_000 / 12_000) < 1e-12);
    // About 62 busy connections of 97 (64%), while creations take 83% of the primary's ceiling.
    assert.ok(Math.abs(row.utilisation['pg-connections'] - row.pgBusyConnections / 97) < 1e-12);
    assert.equal(row.firstToSaturate, 'pg-creates');
  });

  it('gives a small load one instance, one shard and one instance’s pool, and names the instance as busiest', () => {
    const row = sizeFor(100, inputs, DEFAULT_ASSUMPTIONS);
    assert.deepEqual([row.instances, row.shards, row.pgServerConnections], [1, 1, 10]);
    // Lookups never outnumber requests: under 100 a second, not one per key and second.
    assert.ok(row.pgBusyConnections < 0.1);
    assert.equal(row.firstToSaturate, 'instances');
  });

  it('takes its inputs from the figures: the best limiter run, the one-store creations, the PostgreSQL flush', () => {
    const taken = sizingInputs(figures(), 0.1);
    assert.ok(!('missing' in taken));
    assert.equal(taken.scriptCallsPerSecond, 50_000);
    assert.equal(taken.createsPerConnection, 10_000);
    assert.equal(taken.createsCeiling, 12_000);
    assert.equal(taken.lookupsPerConnection, 1_000);
    assert.equal(taken.flushMsPerRow, 300 / 12_000);
    assert.equal(taken.activeKeys, 2_000);
    assert.equal(Math.round(taken.instanceRequestsPerSecond), 1538);
  });

  it('names what is missing when only some parts ran', () => {
    const partial = figures({ service: {}, limiter: [], pgAvailableConnections: undefined });
    const taken = sizingInputs(partial, 0.1);
    assert.deepEqual('missing' in taken ? taken.missing : [], [
      'service on PostgreSQL and Redis',
      'limiter script calls',
      'PostgreSQL max_connections',
    ]);
    assert.match(renderReport(partial, DEFAULT_ASSUMPTIONS, false), /No sizing: it needs service on PostgreSQL/);
  });

  it('reads its assumptions and settings from the environment, refusing nonsense in one line', () => {
    assert.equal(assumptionsFrom({ CAPACITY_HEADROOM: '0.5' }).headroom, 0.5);
    assert.throws(() => assumptionsFrom({ CAPACITY_WRITE_SHARE: '1.5' }), /CAPACITY_WRITE_SHARE must be a fraction/);
    const settings = loadCapacitySettings(['--json', 'out.json'], { CAPACITY_PARTS: 'flush,limiter' });
    assert.deepEqual(settings.parts, ['limiter', 'flush']);
    assert.equal(settings.json, 'out.json');
    assert.equal(settings.databaseUrl, 'postgres://postgres@127.0.0.1:5432/test');
    assert.throws(() => loadCapacitySettings([], { CAPACITY_PARTS: 'gpu' }), /CAPACITY_PARTS: unknown gpu/);
  });
});

describe('bench:capacity report', () => {
  const table: Table = {
    headers: ['Requests/s', 'First to saturate'],
    rightAligned: [true, false],
    rows: [
      ['1,000', 'instance CPU 18%'],
      ['1,000,000', 'PostgreSQL connections (291%, over its limit)'],
    ],
  };

  it('lays Markdown tables out as Prettier does, so a refreshed doc stays formatted', async () => {
    const markdown = markdownTable(table);
    assert.equal(await format(markdown, { parser: 'markdown' }), `${markdown}\n`);
    const report = renderReport(figures(), DEFAULT_ASSUMPTIONS, true);
    assert.equal(await format(report, { parser: 'markdown', proseWrap: 'preserve' }), report);
  });

  it('wraps its Markdown prose at 120 columns, as the docs are', () => {
    const report = renderReport(figures(), DEFAULT_ASSUMPTIONS, true);
    assert.ok(report.split('\n').every((line) => line.startsWith('|') || line.length <= 120));
    assert.equal(wrap('a bb ccc', 4), 'a bb\nccc');
  });

  it('right-aligns numbers in the terminal too', () => {
    assert.deepEqual(textTable(table).split('\n'), [
      'Requests/s  First to saturate',
      '----------  ---------------------------------------------',
      '     1,000  instance CPU 18%',
      ' 1,000,000  PostgreSQL connections (291%, over its limit)',
    ]);
  });

  it('prints the machine, the figures, one sizing row per load and the assumptions', () => {
    const report = renderReport(figures(), DEFAULT_ASSUMPTIONS, true);
    assert.match(
      report,
      /^Measured 2026-11-25 on 2 cores of Test CPU, Node v24\.21\.0, PostgreSQL 15\.20, Redis 7\.0\.15/,
    );
    assert.match(report, /\| mix: 90% reads, 10% creations \|\s+9,[0-9]{3} \|\s+\|\s+1,538 \|/);
    for (const load of ['1,000', '10,000', '100,000', '1,000,000'])
      assert.match(report, new RegExp(`\\|\\s+${load} \\|`));
    assert.match(report, /Assumed: 90% reads .* at most 70% busy/);
    assert.equal(sizingTable(sizingInputs(figures(), 0.1) as SizingInputs, DEFAULT_ASSUMPTIONS).length, 4);
  });

  it('warns that the script figure is a lower bound when Redis was not saturated', () => {
    const held = figures({ limiter: [{ source: 's', detail: 'd', callsPerSecond: 40_000, redisCpu: 0.6 }] });
    assert.match(renderReport(held, DEFAULT_ASSUMPTIONS, false), /Redis was 60% busy .* a lower bound/);
    assert.doesNotMatch(renderReport(figures(), DEFAULT_ASSUMPTIONS, false), /lower bound/);
  });
});

describe('bench:capacity load shapes', () => {
  it('gives redis-benchmark the service’s own call with only the subject randomised', () => {
    const sample = [
      'evalsha',
      'abc123',
      '4',
      'p:{account:424242}:rl:minute:1764242424240',
      'p:{account:424242}:rl:day:1764201600000',
      'p:{account:424242}:strike:key:key_424242',
      'p:{account:424242}:ban:key:key_424242',
      '1764242424242',
      '0',
    ];
    assert.deepEqual(benchmarkCommand(sample, 424242), [
      'evalsha',
      'abc123',
      '4',
      'p:{account:__rand_int__}:rl:minute:1764242424240',
      'p:{account:__rand_int__}:rl:day:1764201600000',
      'p:{account:__rand_int__}:strike:key:key___rand_int__',
      'p:{account:__rand_int__}:ban:key:key___rand_int__',
      '1764242424242',
      '0',
    ]);
  });

  it('builds a typical tally of distinct rows: accounts × keys × operations × outcomes', () => {
    const counts = tallyCounts(tallyShape(10), 3_600_000 * 5 + 17);
    assert.equal(counts.length, 10 * 2 * 3 * 2);
    const distinct = new Set(
      counts.map((count) => `${count.accountId}/${count.keyId}/${count.operation}/${count.outcome}`),
    );
    assert.equal(distinct.size, counts.length);
    assert.ok(counts.every((count) => count.hour === 3_600_000 * 5 && count.accountId >= 1 && count.accountId <= 10));
    assert.equal(tallyCounts(tallyShape(10), 0, 7).length, 7);
  });
});
