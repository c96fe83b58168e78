import { parseArgs } from 'node:util';

export const CAPACITY_PARTS = ['service', 'limiter', 'postgres', 'flush'] as const;
export type CapacityPart = (typeof CAPACITY_PARTS)[number];

/** One capacity run, from CAPACITY_* variables and the command line. */
export type CapacitySettings = ReturnType<typeof loadCapacitySettings>;

export function loadCapacitySettings(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const { values } = parseArgs({
    args: [...argv],
    options: { json: { type: 'string' }, markdown: { type: 'boolean' }, from: { type: 'string' } },
  });
  const names = (env['CAPACITY_PARTS'] || CAPACITY_PARTS.join(',')).split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !CAPACITY_PARTS.some((known) => known === name));
  if (unknown.length > 0) throw new Error(`CAPACITY_PARTS: unknown ${unknown.join(', ')}; use ${CAPACITY_PARTS}`);
  return {
    /** Seconds of each measured run; warm-ups and the shorter parts take a fraction of it. */
    durationSeconds: positive(env, 'CAPACITY_DURATION', 8),
    connections: positive(env, 'CAPACITY_CONNECTIONS', 50),
    pets: positive(env, 'CAPACITY_PETS', 10_000),
    /** Accounts of the typical usage tally (two keys each, three operations, two outcomes). */
    tallyAccounts: positive(env, 'CAPACITY_TALLY_ACCOUNTS', 1000),
    parts: CAPACITY_PARTS.filter((part) => names.includes(part)) as readonly CapacityPart[],
    databaseUrl: env['CAPACITY_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test',
    redisUrl: env['CAPACITY_REDIS_URL'] || 'redis://127.0.0.1:6379',
    /** Where to save the figures and the sizing. */
    json: values.json || undefined,
    /** Print the tables for docs/operations.md instead of the report. */
    markdown: values.markdown === true,
    /** Render a saved run instead of measuring. */
    from: values.from || undefined,
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got '${env[name]}')`);
  return value;
}
