import { parseArgs } from 'node:util';

export const SCENARIO_NAMES = ['list', 'get', 'get-all', 'get-zipf', 'post'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** The scenarios `npm run bench:capacity` measures: the three its sizing mixes. */
export const CAPACITY_SCENARIO_NAMES = ['list', 'get', 'post'] as const satisfies readonly ScenarioName[];
export type CapacityScenarioName = (typeof CAPACITY_SCENARIO_NAMES)[number];

/** One benchmark run, from BENCH_* variables and the command line (`--baseline <git-ref>`, repeatable). */
export type BenchSettings = ReturnType<typeof loadSettings>;

export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const { values } = parseArgs({ args: [...argv], options: { baseline: { type: 'string', multiple: true } } });
  const names = (env['BENCH_SCENARIOS'] || SCENARIO_NAMES.join(',')).split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !SCENARIO_NAMES.some((known) => known === name));
  if (unknown.length > 0) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')}; use ${SCENARIO_NAMES}`);
  return {
    durationSeconds: positive(env, 'BENCH_DURATION', 10),
    rounds: positive(env, 'BENCH_ROUNDS', 3),
    connections: positive(env, 'BENCH_CONNECTIONS', 50),
    scenarios: SCENARIO_NAMES.filter((name) => names.includes(name)) as readonly ScenarioName[],
    /** PostgreSQL instead of a temporary SQLite file; each server gets a schema of its own. */
    databaseUrl: env['BENCH_DATABASE_URL'] || undefined,
    redisUrl: env['BENCH_REDIS_URL'] || undefined,
    /** Earlier commits measured beside this checkout, in the same rounds (`BENCH_BASELINE`: comma-separated). */
    baselines: values.baseline ?? (env['BENCH_BASELINE'] || '').split(',').filter((ref) => ref.trim() !== ''),
    /** Sent as Accept-Encoding with every request (e.g. `gzip`); the bare server answers the same compressed bytes. */
    acceptEncoding: env['BENCH_ACCEPT_ENCODING'] || undefined,
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got '${env[name]}')`);
  return value;
}
