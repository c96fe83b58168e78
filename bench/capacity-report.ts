import {
  COMPONENT_NAMES,
  type Component,
  mixedRequestsPerSecond,
  sizingInputs,
  sizingTable,
  type Assumptions,
  type CapacityFigures,
  type FlushRun,
  type LimiterRun,
  type ServiceFigures,
  type SizingInputs,
  type SizingRow,
} from './capacity-model.ts';
import { CAPACITY_SCENARIO_NAMES } from './settings.ts';

/** A table for the terminal or for Markdown; numeric columns are right-aligned. */
export interface Table {
  readonly headers: readonly string[];
  readonly rightAligned: readonly boolean[];
  readonly rows: readonly (readonly string[])[];
}

const widths = (table: Table): number[] =>
  table.headers.map((header, column) =>
    Math.max(3, header.length, ...table.rows.map((row) => (row[column] ?? '').length)),
  );

const pad = (cell: string, width: number, right: boolean | undefined): string =>
  right ? cell.padStart(width) : cell.padEnd(width);

/** Pipes padded as Prettier lays them out, so that a pasted table stays as it is. */
export function markdownTable(table: Table): string {
  const sizes = widths(table);
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => pad(cell, sizes[column] ?? 3, table.rightAligned[column])).join(' | ')} |`;
  const rule = sizes.map((size, column) =>
    table.rightAligned[column] ? `${'-'.repeat(size - 1)}:` : '-'.repeat(size),
  );
  return [line(table.headers), `| ${rule.join(' | ')} |`, ...table.rows.map(line)].join('\n');
}

export function textTable(table: Table): string {
  const sizes = widths(table);
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => pad(cell, sizes[column] ?? 3, table.rightAligned[column]))
      .join('  ')
      .trimEnd();
  return [line(table.headers), line(sizes.map((size) => '-'.repeat(size))), ...table.rows.map(line)].join('\n');
}

const connections = (count: number): string => (count === 1 ? 'one connection' : `${count} connections`);
const whole = (value: number): string => Math.round(value).toLocaleString('en-US');
const percent = (fraction: number): string => `${(fraction * 100).toFixed(fraction < 0.1 ? 1 : 0)}%`;
const ms = (value: number): string => value.toFixed(value < 10 ? 2 : 0);

export function machineLine(figures: CapacityFigures): string {
  const { machine } = figures;
  const stores = [
    machine.postgres === undefined ? '' : `PostgreSQL ${machine.postgres}`,
    machine.redis === undefined ? '' : `Redis ${machine.redis}`,
  ].filter(Boolean);
  return (
    `Measured ${machine.date} on ${machine.cores} cores of ${machine.cpuModel}, Node ${machine.node}` +
    `${stores.length > 0 ? `, ${stores.join(', ')}` : ''}; ${figures.durationSeconds} s per run, ` +
    `${figures.connections} HTTP connections.`
  );
}

/** One instance's requests a second per scenario and at the mix, on each backend measured. */
export function serviceTable(figures: CapacityFigures, assumptions: Assumptions): Table | undefined {
  const measured: [string, ServiceFigures | undefined][] = [
    ['SQLite, memory limiter', figures.service.embedded],
    ['PostgreSQL, Redis', figures.service.postgres],
  ];
  const backends = measured.filter((entry): entry is [string, ServiceFigures] => entry[1] !== undefined);
  if (backends.length === 0) return undefined;
  const headers = ['One instance', ...backends.flatMap(([name]) => [`${name}: req/s`, 'p99 ms'])];
  const rows = CAPACITY_SCENARIO_NAMES.map((scenario) => [
    scenario,
    ...backends.flatMap(([, service]) => [whole(service[scenario].requestsPerSecond), ms(service[scenario].p99Ms)]),
  ]);
  const mix = `mix: ${percent(1 - assumptions.writeShare)} reads, ${percent(assumptions.writeShare)} creations`;
  rows.push([
    mix,
    ...backends.flatMap(([, service]) => [whole(mixedRequestsPerSecond(service, assumptions.writeShare)), '']),
  ]);
  return { headers, rightAligned: headers.map((_, column) => column > 0), rows };
}

function flushRow(run: FlushRun, assumptions: Assumptions): string[] {
  const interval = assumptions.flushIntervalMs;
  const holder = run.backend === 'sqlite' ? 'the SQLite writer' : 'one connection';
  const name = run.backend === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const tally = run.tally === 'typical' ? 'typical tally' : "the tally's bound";
  return [
    `Usage flush, ${name}, ${whole(run.rows)} rows (${tally})`,
    `${whole(run.wallMs)} ms`,
    `every ${interval / 1000} s: ${percent(run.wallMs / interval)} of ${holder}, ` +
      `${percent(run.cpuMs / interval)} of a core in the instance`,
  ];
}

/** Redis, PostgreSQL and the usage flush: each figure, and how it was measured. */
export function componentTable(figures: CapacityFigures, assumptions: Assumptions): Table {
  const rows: string[][] = [
    ...figures.limiter.map((run) => [
      'Limiter script, one Redis: calls/s',
      whole(run.callsPerSecond),
      `${run.source}, ${run.detail}; Redis CPU ${percent(run.redisCpu)} ` +
        `(${whole(run.callsPerSecond / run.redisCpu)} calls per CPU second)`,
    ]),
    ...figures.creates.map((run) => [
      `PostgreSQL creations/s, ${run.stores === 1 ? 'one store' : `${run.stores} stores at once`}`,
      whole(run.createsPerSecond),
      `store.pets.create (group commit: one batch in flight per store), ${run.callers} callers`,
    ]),
    ...figures.lookups.map((run) => [
      'PostgreSQL key lookups/s, per connection',
      whole(run.lookupsPerSecond / run.connections),
      `store.keys.findPrincipalByHash, ${run.callers} callers on ${connections(run.connections)}`,
    ]),
    ...figures.flushes.map((run) => flushRow(run, assumptions)),
  ];
  return { headers: ['Figure', 'Value', 'How'], rightAligned: [false, true, false], rows };
}

export function sizingTableOf(rows: readonly SizingRow[]): Table {
  const headers = [
    'Requests/s',
    'Instances',
    'Redis shards',
    'PostgreSQL connections (pooler → server)',
    'Pooler client connections',
    'Creation ceiling used',
    'First to saturate',
  ];
  return {
    headers,
    rightAligned: headers.map((_, column) => column < headers.length - 1),
    rows: rows.map((row) => [
      whole(row.load),
      whole(row.instances),
      whole(row.shards),
      whole(row.pgServerConnections),
      whole(row.poolerClientConnections),
      percent(row.utilisation['pg-creates']),
      saturation(row),
    ]),
  };
}

/** The busiest component; when some are past their limit, all of those, busiest first. */
function saturation(row: SizingRow): string {
  const over = (Object.keys(row.utilisation) as Component[])
    .filter((component) => row.utilisation[component] > 1)
    .sort((a, b) => row.utilisation[b] - row.utilisation[a]);
  const named = (component: Component) => `${COMPONENT_NAMES[component]} ${percent(row.utilisation[component])}`;
  if (over.length === 0) return named(row.firstToSaturate);
  return `${over.map(named).join(', ')}: over ${over.length === 1 ? 'its limit' : 'their limits'}`;
}

export function inputsLine(inputs: SizingInputs): string {
  return (
    `Inputs: ${whole(inputs.instanceRequestsPerSecond)} req/s per instance at the mix, ` +
    `${whole(inputs.scriptCallsPerSecond)} script calls/s per shard, ` +
    `${whole(inputs.createsPerConnection)} creations/s per connection and ${whole(inputs.createsCeiling)} ` +
    `for the primary, ${whole(inputs.lookupsPerConnection)} key lookups/s per connection, ` +
    `${inputs.flushMsPerRow.toFixed(3)} ms of a connection per flushed row, ` +
    `${whole(inputs.pgAvailableConnections)} connections available on the server.`
  );
}

export function assumptionsLine(assumptions: Assumptions, activeKeys: number): string {
  const reads = percent(1 - assumptions.writeShare);
  return (
    `Assumed: ${reads} reads (half lists, half single pets) and ${percent(assumptions.writeShare)} creations; ` +
    `every component at most ${percent(assumptions.headroom)} busy; PG_POOL_SIZE ${assumptions.pgPoolSize}, ` +
    `${assumptions.cliConnections} connections for the CLI; USAGE_FLUSH_MS ${assumptions.flushIntervalMs}, ` +
    `KEY_CACHE_TTL_MS ${assumptions.keyCacheTtlMs}; ${whole(activeKeys)} active keys (the typical tally's).`
  );
}

/** Where a figure is likely below what the component can do. */
export function cautions(figures: CapacityFigures): string[] {
  const best = figures.limiter.reduce<LimiterRun | undefined>(
    (top, run) => (top === undefined || run.callsPerSecond > top.callsPerSecond ? run : top),
    undefined,
  );
  if (best === undefined || best.redisCpu >= 0.9) return [];
  return [
    `Redis was ${percent(best.redisCpu)} busy in the best limiter run: the load generator or the machine held it ` +
      'back, so the script figure is a lower bound.',
  ];
}

/** Greedy wrapping of a paragraph at `width`, as the docs are wrapped; a longer word stays whole. */
export function wrap(paragraph: string, width = 120): string {
  const lines: string[] = [];
  for (const word of paragraph.split(/\s+/).filter(Boolean)) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.join('\n');
}

/**
 * The whole report: the machine, the measured figures and, when every part ran, the sizing table
 * with its inputs and assumptions. Markdown for docs/operations.md, or plain text.
 */
export function renderReport(figures: CapacityFigures, assumptions: Assumptions, markdown: boolean): string {
  const render = markdown ? markdownTable : textTable;
  const prose = markdown ? wrap : (paragraph: string) => paragraph;
  const service = serviceTable(figures, assumptions);
  const inputs = sizingInputs(figures, assumptions.writeShare);
  const sizing =
    'missing' in inputs
      ? [prose(`No sizing: it needs ${inputs.missing.join(', ')}.`)]
      : [
          render(sizingTableOf(sizingTable(inputs, assumptions))),
          prose(inputsLine(inputs)),
          prose(assumptionsLine(assumptions, inputs.activeKeys)),
        ];
  const parts = [
    prose(machineLine(figures)),
    ...(service === undefined ? [] : [render(service)]),
    ...(componentTable(figures, assumptions).rows.length > 0 ? [render(componentTable(figures, assumptions))] : []),
    ...cautions(figures).map(prose),
    ...sizing,
  ];
  return `${parts.join('\n\n')}\n`;
}
