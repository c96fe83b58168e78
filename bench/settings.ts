import { EnvSchema } from '../src/config.ts';
import { SCENARIO_NAMES, type ScenarioName } from './scenarios.ts';

/** What one benchmark run does, read from BENCH_* environment variables. */
export interface BenchSettings {
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly rounds: number;
  readonly pets: number;
  /** LOG_LEVEL of the service: `info` by default, since that is what operators run. */
  readonly logLevel: string;
  /** Another backend (postgres://…, or a sqlite: path to keep); undefined for a temporary SQLite file. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  readonly scenarios: readonly ScenarioName[];
  /** Also measure the service without its limits step, to report what that step costs (issue #3). */
  readonly limitsCost: boolean;
  /** Fresh pairs of processes (service, service without limits), runs per scenario in each, seconds per run. */
  readonly limitsInvocations: number;
  readonly limitsRuns: number;
  readonly limitsSeconds: number;
  /** Warm-up of a fresh pair before its first scenario: long enough for the JIT to settle at half a CPU each. */
  readonly limitsWarmupSeconds: number;
  /** Give the servers and the load generator CPUs of their own for that phase, when none were set. */
  readonly limitsPinned: boolean;
  /** A/A calibration of that phase: both sides run without limits, so any cost shown is the method's own error. */
  readonly limitsCalibration: boolean;
  /** When set, the service runs with --cpu-prof and writes its profile here on exit. */
  readonly cpuProfileDir: string | undefined;
  /**
   * CPU lists (taskset syntax, e.g. "1" and "0") for the two servers and for this process, the
   * load generator; undefined leaves placement to the scheduler.
   */
  readonly serverCpus: string | undefined;
  readonly loadGeneratorCpus: string | undefined;
  /** BENCH_SERVICE_<NAME>=value becomes <NAME>=value in the service's environment. */
  readonly serviceEnv: Readonly<Record<string, string>>;
}

export class SettingsError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const scenarios = listOf(env, 'BENCH_SCENARIOS', SCENARIO_NAMES);
  const logLevel = text(env, 'BENCH_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new SettingsError(`BENCH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got '${logLevel}')`);
  const databaseUrl = text(env, 'BENCH_DATABASE_URL');
  if (databaseUrl !== undefined && !/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new SettingsError(`BENCH_DATABASE_URL must be sqlite:PATH or postgres://… (got '${databaseUrl}')`);
  }
  return {
    durationSeconds: positive(env, 'BENCH_DURATION', 10),
    warmupSeconds: positive(env, 'BENCH_WARMUP', 2, true),
    connections: positive(env, 'BENCH_CONNECTIONS', 50),
    rounds: positive(env, 'BENCH_ROUNDS', 3),
    pets: positive(env, 'BENCH_PETS', 10_000),
    logLevel,
    databaseUrl,
    redisUrl: text(env, 'BENCH_REDIS_URL'),
    scenarios,
    limitsCost: flag(env, 'BENCH_LIMITS_COST', true),
    limitsInvocations: positive(env, 'BENCH_LIMITS_INVOCATIONS', 10),
    limitsRuns: positive(env, 'BENCH_LIMITS_RUNS', 1),
    limitsSeconds: positive(env, 'BENCH_LIMITS_SECONDS', 4),
    limitsWarmupSeconds: positive(env, 'BENCH_LIMITS_WARMUP', 8, true),
    limitsPinned: flag(env, 'BENCH_LIMITS_PINNED', true),
    limitsCalibration: flag(env, 'BENCH_LIMITS_AA', false),
    cpuProfileDir: text(env, 'BENCH_CPU_PROF_DIR'),
    serverCpus: cpuList(env, 'BENCH_SERVER_CPUS'),
    loadGeneratorCpus: cpuList(env, 'BENCH_LOADGEN_CPUS'),
    serviceEnv: serviceOverrides(env),
  };
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new SettingsError(`${name} must be 1 or 0 (got '${raw}')`);
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, zeroAllowed = false): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (zeroAllowed ? 0 : 1)) {
    throw new SettingsError(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} integer (got '${raw}')`);
  }
  return value;
}

function cpuList(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = text(env, name);
  if (raw !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(raw))
    throw new SettingsError(`${name} must be a CPU list such as 1 or 0,2-3 (got '${raw}')`);
  return raw;
}

function listOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[]): T[] {
  const raw = text(env, name);
  if (raw === undefined) return [...allowed];
  const chosen: T[] = [];
  for (const item of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = allowed.find((candidate) => candidate === item);
    if (!match) throw new SettingsError(`${name}: '${item}' is not one of ${allowed.join(', ')}`);
    if (!chosen.includes(match)) chosen.push(match);
  }
  if (chosen.length === 0) throw new SettingsError(`${name} names no scenario`);
  return chosen;
}

/** The service's own variables are never inherited from the caller's shell, only set on purpose. */
export function serviceVariableNames(): string[] {
  return Object.keys(EnvSchema.properties);
}

function serviceOverrides(env: NodeJS.ProcessEnv): Record<string, string> {
  const known = new Set(serviceVariableNames());
  const overrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('BENCH_SERVICE_') || value === undefined) continue;
    const target = name.slice('BENCH_SERVICE_'.length);
    if (!known.has(target)) throw new SettingsError(`${name}: ${target} is not a setting of the service`);
    overrides[target] = value;
  }
  return overrides;
}
