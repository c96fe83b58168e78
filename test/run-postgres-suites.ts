import { spawnSync } from 'node:child_process';
import { postgresBackend } from './support/backends.ts';
import { redisBackend } from './support/redis-backend.ts';

/**
 * Runs the HTTP suites a second time, on PostgreSQL + Redis (`npm run test:postgres`). When either
 * is unreachable it says so and skips, except with CI=true, where backends() and redisBackend()
 * reject and this run fails.
 */
const HTTP_SUITES = [
  'test/pets-list.test.ts',
  'test/pets-create.test.ts',
  'test/pets-get.test.ts',
  'test/auth.test.ts',
  'test/errors.test.ts',
  'test/ratelimit/rate-limit-http.test.ts',
];

const [postgres, redis] = await Promise.all([postgresBackend(), redisBackend()]);
await postgres.cleanup();
await redis.cleanup();
const unavailable = postgres.skip ?? redis.skip;
if (unavailable) {
  process.stdout.write(`SKIPPED: the HTTP suites on PostgreSQL + Redis: ${unavailable}\n`);
} else {
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...HTTP_SUITES], {
    stdio: 'inherit',
    env: { ...process.env, PETSTORE_TEST_BACKEND: 'postgres' },
  });
  process.exitCode = run.status ?? 1;
}
