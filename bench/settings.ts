import { parseArgs } from 'node:util';

export const SCENARIO_NAMES = ['list', 'get', 'post'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** One benchmark run, from BENCH_* variables and the command line. */
export interface BenchSettings {
  readonly durationSeconds: number;
  readonly rounds: number;
  readonly connections: number;
  readonly scenarios: readonly ScenarioName[];
  /** PostgreSQL instead of a temporary SQLite file; each server gets a schema of its own. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** A git ref to compare the current checkout with. */
  readonly baseline: string | undefined;
}

export class SettingsError extends Error {}

export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv): BenchSettings {
  const { values } = parseArgs({ args: [...argv], options: { baseline: { type: 'string' } }, strict: true });
  const databaseUrl = text(env['BENCH_DATABASE_URL']);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    throw new SettingsError(`BENCH_DATABASE_URL must be postgres://… (got '${databaseUrl}')`);
  }
  return {
    durationSeconds: positive(env, 'BENCH_DURATION', 10),
    rounds: positive(env, 'BENCH_ROUNDS', 3),
    connections: positive(env, 'BENCH_CONNECTIONS', 50),
    scenarios: scenarioList(text(env['BENCH_SCENARIOS'])),
    databaseUrl,
    redisUrl: text(env['BENCH_REDIS_URL']),
    baseline: text(values.baseline) ?? text(env['BENCH_BASELINE']),
  };
}

function text(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = text(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new SettingsError(`${name} must be a positive integer (got '${raw}')`);
  return value;
}

function scenarioList(raw: string | undefined): ScenarioName[] {
  if (raw === undefined) return [...SCENARIO_NAMES];
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !SCENARIO_NAMES.some((known) => known === name));
  if (unknown.length > 0) throw new SettingsError(`BENCH_SCENARIOS: unknown ${unknown.join(', ')}`);
  return SCENARIO_NAMES.filter((name) => names.includes(name));
}
