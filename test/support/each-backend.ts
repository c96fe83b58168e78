import { describe } from 'node:test';
import { postgresBackend } from './backends.ts';
import { redisBackend } from './redis-backend.ts';
import { SQLITE_PAIR, type BackendPair } from './test-app.ts';

/**
 * Runs a suite once per backend pair, in the same `node --test` run:
 *
 *   describeEachBackend('GET /v1/pets', (backend) => {
 *     before(async () => { app = await startTestApp({ backend }); });
 *     …
 *   });
 *
 * registers `GET /v1/pets [SQLite file + in-memory limiter]` and
 * `GET /v1/pets [PostgreSQL schema + Redis prefix]`. The second is skipped with the reason when
 * PostgreSQL or Redis is unreachable, unless CI=true: then importing this module throws, which
 * fails the test file instead of silently skipping.
 */

async function postgresRedisUnavailable(): Promise<string | undefined> {
  const [postgres, redis] = await Promise.all([postgresBackend(), redisBackend()]);
  await Promise.all([postgres.cleanup(), redis.cleanup()]);
  return postgres.skip ?? redis.skip;
}

const POSTGRES_REDIS_SKIP = await postgresRedisUnavailable();

export const POSTGRES_PAIR: BackendPair = {
  name: 'postgres',
  title: 'PostgreSQL schema + Redis prefix',
  ...(POSTGRES_REDIS_SKIP === undefined ? {} : { skip: POSTGRES_REDIS_SKIP }),
};

export const BACKEND_PAIRS: readonly BackendPair[] = [SQLITE_PAIR, POSTGRES_PAIR];

export interface EachBackendOptions {
  /** node:test's `concurrency` for the tests of each suite. */
  readonly concurrency?: boolean | number;
}

export function describeEachBackend(
  title: string,
  suite: (backend: BackendPair) => void,
  options: EachBackendOptions = {},
): void {
  for (const backend of BACKEND_PAIRS) {
    describe(`${title} [${backend.title}]`, { ...options, skip: backend.skip ?? false }, () => suite(backend));
  }
}
