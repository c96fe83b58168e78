import { median } from './report.ts';
import type { CapacityScenarioName } from './settings.ts';

/**
 * What `npm run bench:capacity` measured, as it is saved with `--json`, and the sizing formula that
 * turns it into instances, Redis shards and PostgreSQL connections. Pure: no I/O here.
 */

export interface ScenarioFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export type ServiceFigures = Readonly<Record<CapacityScenarioName, ScenarioFigures>>;

/** One way of driving the rate-limit script, and what Redis did meanwhile. */
export interface LimiterRun {
  /** Which load generator, e.g. `redis-benchmark EVALSHA` or `RedisLimiter.consume`. */
  readonly source: string;
  /** How it was driven: clients, pipelining, threads. */
  readonly detail: string;
  readonly callsPerSecond: number;
  /** Redis's own CPU time over the run's wall time (INFO cpu): near 1, Redis was the bottleneck. */
  readonly redisCpu: number;
}

/** PostgreSQL creations through the store's own create path (group commit included). */
export interface CreateRun {
  /** Stores opened side by side, as instances would be; each writes one batch at a time. */
  readonly stores: number;
  readonly callers: number;
  readonly createsPerSecond: number;
}

/** API key lookups, the one read every instance makes of PostgreSQL per key and cache period. */
export interface LookupRun {
  readonly connections: number;
  readonly callers: number;
  readonly lookupsPerSecond: number;
}

export type FlushBackend = 'sqlite' | 'postgres';

/** One usage flush: the tally's rows added to `usage_hours` in one transaction. */
export interface FlushRun {
  readonly backend: FlushBackend;
  /** `typical`: the tally described by TallyShape; `bound`: the tally's limit of entries. */
  readonly tally: 'typical' | 'bound';
  readonly rows: number;
  /** Median over the repetitions. */
  readonly wallMs: number;
  /** This process's CPU time (the client's; SQLite's own work included, as it runs in process). */
  readonly cpuMs: number;
}

/** The typical tally of one flush interval: every key of every account, under a few operations and outcomes. */
export interface TallyShape {
  readonly accounts: number;
  readonly keysPerAccount: number;
  readonly operations: number;
  readonly outcomes: number;
}

export interface Machine {
  /** ISO date of the run. */
  readonly date: string;
  readonly cores: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly postgres: string | undefined;
  readonly redis: string | undefined;
}

export interface CapacityFigures {
  readonly machine: Machine;
  readonly durationSeconds: number;
  readonly connections: number;
  readonly service: { readonly embedded?: ServiceFigures; readonly postgres?: ServiceFigures };
  readonly limiter: readonly LimiterRun[];
  readonly creates: readonly CreateRun[];
  readonly lookups: readonly LookupRun[];
  readonly tally: TallyShape;
  readonly flushes: readonly FlushRun[];
  /** max_connections − superuser_reserved_connections of the server measured. */
  readonly pgAvailableConnections: number | undefined;
}

/** What the formula assumes about the traffic and the deployment. */
export interface Assumptions {
  /** Share of requests that create a pet; the rest are reads, half lists, half single pets. */
  readonly writeShare: number;
  /** Target utilisation of every component: sized so that each runs at most this busy. */
  readonly headroom: number;
  /** PG_POOL_SIZE of every instance. */
  readonly pgPoolSize: number;
  /** Client connections of the CLI and of migrations, beside the instances'. */
  readonly cliConnections: number;
  /** USAGE_FLUSH_MS. */
  readonly flushIntervalMs: number;
  /** KEY_CACHE_TTL_MS: how often an instance looks up each key it serves. */
  readonly keyCacheTtlMs: number;
}

export const DEFAULT_ASSUMPTIONS: Assumptions = Object.freeze({
  writeShare: 0.1,
  headroom: 0.7,
  pgPoolSize: 10,
  cliConnections: 5,
  flushIntervalMs: 10_000,
  keyCacheTtlMs: 1000,
});

export const SIZING_LOADS: readonly number[] = [1_000, 10_000, 100_000, 1_000_000];

/** The measured figures the formula uses, each one number. */
export interface SizingInputs {
  /** One instance on PostgreSQL and Redis, at the assumed mix (harmonic mean of the scenarios). */
  readonly instanceRequestsPerSecond: number;
  /** One Redis shard's limiter script calls a second: the best load generator's. */
  readonly scriptCallsPerSecond: number;
  /** Creations a second through one connection (one store: one batch at a time). */
  readonly createsPerConnection: number;
  /** Creations a second of the whole primary: the most any run reached (one lock orders them all). */
  readonly createsCeiling: number;
  readonly lookupsPerConnection: number;
  /** A flush's connection time per row on PostgreSQL, from the typical tally. */
  readonly flushMsPerRow: number;
  /** Rows of one instance's typical flush. */
  readonly tallyRows: number;
  readonly activeKeys: number;
  readonly pgAvailableConnections: number;
}

export type Component = 'instances' | 'redis' | 'pg-creates' | 'pg-connections';

export const COMPONENT_NAMES: Readonly<Record<Component, string>> = Object.freeze({
  instances: 'instance CPU',
  redis: 'Redis shards',
  'pg-creates': "the primary's creations",
  'pg-connections': 'PostgreSQL connections',
});

export interface SizingRow {
  /** Requests a second, all instances together. */
  readonly load: number;
  readonly instances: number;
  /** Redis Cluster masters. */
  readonly shards: number;
  /** Busy PostgreSQL connections at this load, before headroom: creations, key lookups, flushes. */
  readonly pgBusyConnections: number;
  /** Pooler → PostgreSQL (PgBouncer's pool size); at least one instance's PG_POOL_SIZE. */
  readonly pgServerConnections: number;
  /** Instances → pooler: every instance's whole pool, and the CLI's. */
  readonly poolerClientConnections: number;
  /** How busy each component is at these sizes (1 = saturated). */
  readonly utilisation: Readonly<Record<Component, number>>;
  /** The busiest component: the one that saturates first as the load grows. */
  readonly firstToSaturate: Component;
}

const SCENARIO_SHARES = (writeShare: number): Readonly<Record<CapacityScenarioName, number>> => ({
  list: (1 - writeShare) / 2,
  get: (1 - writeShare) / 2,
  post: writeShare,
});

/** Requests a second of one instance at the mix: each request takes its scenario's share of a second. */
export function mixedRequestsPerSecond(service: ServiceFigures, writeShare: number): number {
  const shares = SCENARIO_SHARES(writeShare);
  const secondsPerRequest = (Object.keys(shares) as CapacityScenarioName[]).reduce(
    (sum, name) => sum + shares[name] / service[name].requestsPerSecond,
    0,
  );
  return 1 / secondsPerRequest;
}

/** The inputs, or the names of the figures missing for them (a run of only some parts). */
export function sizingInputs(figures: CapacityFigures, writeShare: number): SizingInputs | { missing: string[] } {
  const { service, limiter, creates, lookups, flushes, tally } = figures;
  const oneStore = creates.filter((run) => run.stores === 1);
  const flush = flushes.find((run) => run.backend === 'postgres' && run.tally === 'typical');
  const missing = [
    service.postgres === undefined ? 'service on PostgreSQL and Redis' : '',
    limiter.length === 0 ? 'limiter script calls' : '',
    oneStore.length === 0 ? 'PostgreSQL creations through one store' : '',
    lookups.length === 0 ? 'PostgreSQL key lookups' : '',
    flush === undefined ? 'usage flush on PostgreSQL' : '',
    figures.pgAvailableConnections === undefined ? 'PostgreSQL max_connections' : '',
  ].filter(Boolean);
  if (missing.length > 0 || service.postgres === undefined || flush === undefined) return { missing };
  return {
    instanceRequestsPerSecond: mixedRequestsPerSecond(service.postgres, writeShare),
    scriptCallsPerSecond: Math.max(...limiter.map((run) => run.callsPerSecond)),
    createsPerConnection: median(oneStore.map((run) => run.createsPerSecond)),
    createsCeiling: Math.max(...creates.map((run) => run.createsPerSecond)),
    lookupsPerConnection: Math.max(...lookups.map((run) => run.lookupsPerSecond / run.connections)),
    flushMsPerRow: flush.wallMs / flush.rows,
    tallyRows: flush.rows,
    activeKeys: tally.accounts * tally.keysPerAccount,
    pgAvailableConnections: figures.pgAvailableConnections ?? 0,
  };
}

/**
 * The sizes for `load` requests a second:
 * - instances = ceil(load / (one instance's req/s at the mix × headroom));
 * - shards = ceil(load / (script calls/s × headroom)): every request runs the limiter script once;
 * - PostgreSQL: the connections kept busy by creations (load × write share ÷ creations per
 *   connection), key lookups (an instance looks a key up on its first request after the cache
 *   period; the active keys share the load evenly) and usage flushes (each instance's rows per
 *   interval × time per row), divided by headroom; never fewer than one instance's pool. Busy
 *   connections are bounded by the server's and by the instances' pools together, whichever is fewer.
 * - creations: one lock orders every creation, so the primary's create rate does not grow with
 *   instances or connections: its ceiling is what the busiest run reached.
 */
export function sizeFor(load: number, inputs: SizingInputs, assumptions: Assumptions): SizingRow {
  const { headroom } = assumptions;
  const instances = Math.max(1, Math.ceil(load / (inputs.instanceRequestsPerSecond * headroom)));
  const shards = Math.max(1, Math.ceil(load / (inputs.scriptCallsPerSecond * headroom)));
  const perInstance = load / instances;
  const creates = load * assumptions.writeShare;
  // A key's requests reach an instance at `rate` a second; after each lookup the answer is trusted
  // for the cache period, and the next request looks it up again: one lookup per (period + 1 / rate).
  const rate = perInstance / inputs.activeKeys;
  const lookups = (instances * inputs.activeKeys * rate) / (1 + (rate * assumptions.keyCacheTtlMs) / 1000);
  const flushRows = Math.min(inputs.tallyRows, (perInstance * assumptions.flushIntervalMs) / 1000);
  const flushBusy = (instances * flushRows * inputs.flushMsPerRow) / assumptions.flushIntervalMs;
  const pgBusyConnections = creates / inputs.createsPerConnection + lookups / inputs.lookupsPerConnection + flushBusy;
  const pgServerConnections = Math.max(assumptions.pgPoolSize, Math.ceil(pgBusyConnections / headroom));
  const utilisation: Record<Component, number> = {
    instances: load / (instances * inputs.instanceRequestsPerSecond),
    redis: load / (shards * inputs.scriptCallsPerSecond),
    'pg-creates': creates / inputs.createsCeiling,
    // An instance cannot use more than its pool, nor all of them more than the server allows.
    'pg-connections': pgBusyConnections / Math.min(inputs.pgAvailableConnections, instances * assumptions.pgPoolSize),
  };
  const firstToSaturate = (Object.keys(utilisation) as Component[]).reduce((busiest, component) =>
    utilisation[component] > utilisation[busiest] ? component : busiest,
  );
  return {
    load,
    instances,
    shards,
    pgBusyConnections,
    pgServerConnections,
    poolerClientConnections: instances * assumptions.pgPoolSize + assumptions.cliConnections,
    utilisation,
    firstToSaturate,
  };
}

/** Every row of the sizing table. */
export function sizingTable(
  inputs: SizingInputs,
  assumptions: Assumptions,
  loads: readonly number[] = SIZING_LOADS,
): SizingRow[] {
  return loads.map((load) => sizeFor(load, inputs, assumptions));
}

/** Assumptions with CAPACITY_WRITE_SHARE and CAPACITY_HEADROOM applied, each a fraction in (0, 1]. */
export function assumptionsFrom(env: NodeJS.ProcessEnv): Assumptions {
  return {
    ...DEFAULT_ASSUMPTIONS,
    writeShare: fraction(env, 'CAPACITY_WRITE_SHARE', DEFAULT_ASSUMPTIONS.writeShare),
    headroom: fraction(env, 'CAPACITY_HEADROOM', DEFAULT_ASSUMPTIONS.headroom),
  };
}

function fraction(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] || fallback);
  if (!(value > 0 && value <= 1)) throw new Error(`${name} must be a fraction in (0, 1] (got '${env[name]}')`);
  return value;
}
