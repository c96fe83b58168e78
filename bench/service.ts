import type { LoadTarget } from './load.ts';
import { cleanEnv, runCli, scriptArgs, startServer, type ChildServer } from './processes.ts';

/** Effectively unlimited, so that rate limiting never throttles the benchmark. */
const BENCH_LIMIT = '1000000000';
const SEED_CONCURRENCY = 16;
const STATUSES = ['available', 'pending', 'sold'] as const;

export interface ServiceOptions {
  /** `current`, `baseline` or `service`: how the reports name it. */
  readonly name: string;
  /** The checkout whose package.json, CLI and entry are used. */
  readonly checkout: string;
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  readonly pets: number;
}

export interface StartedService {
  readonly server: ChildServer;
  readonly target: LoadTarget;
}

/**
 * Sets a checkout's service up through its public surfaces only (the operator CLI, the `start`
 * script's entry, HTTP), so that any version of it can be measured the same way.
 */
export async function startService(options: ServiceOptions): Promise<StartedService> {
  const env = cleanEnv({
    DATABASE_URL: options.databaseUrl,
    LOG_LEVEL: 'info',
    DEMO_BOOTSTRAP: 'false',
    ...(options.redisUrl === undefined ? {} : { REDIS_URL: options.redisUrl }),
  });
  const cliEnv = { ...env, LOG_LEVEL: 'silent' };
  await runCli(options.checkout, cliEnv, ['migrate']);
  const limits = ['--per-minute', BENCH_LIMIT, '--per-day', BENCH_LIMIT];
  await runCli(options.checkout, cliEnv, ['account', 'create', '--name', 'bench', '--plan', 'enterprise', ...limits]);
  const created = await runCli(options.checkout, cliEnv, ['key', 'create', '--account', 'bench']);
  const key = created.trim().split('\n').at(-1) ?? '';
  const server = await startServer(options.name, options.checkout, scriptArgs(options.checkout, 'start'), env);
  try {
    const petIds = await seedPets(server.url, key, options.pets);
    return { server, target: { name: options.name, url: server.url, key, petIds } };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Creates `count` pets over HTTP, a few at a time; returns their ids in ascending order. */
async function seedPets(url: string, key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const createPets = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const pet = { name: `Pet ${index + 1}`, categoryId: index % 100, status: STATUSES[index % STATUSES.length] };
      const response = await fetch(`${url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(pet),
      });
      const body = await response.text();
      if (response.status !== 201) throw new Error(`seeding: POST /v1/pets answered ${response.status}: ${body}`);
      ids.push(String((JSON.parse(body) as { id: unknown }).id));
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, createPets));
  // Ids are non-negative integers, possibly beyond 2^53: shorter is smaller, then digit by digit.
  return ids.sort((a, b) => a.length - b.length || a.localeCompare(b));
}
