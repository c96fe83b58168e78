import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../src/clock.ts';
import { ManualClock } from './manual-clock.ts';
import { buildServices, type Services } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { postgresBackend, sqliteBackend, type Backend } from './backends.ts';
import { redisBackend, type RedisBackend } from './redis-backend.ts';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Base URL of the app listening on an ephemeral port of 127.0.0.1. */
  readonly url: string;
  readonly clock: Clock;
  /** A fresh account (free plan unless told) and a key for it. */
  newKey(options?: {
    plan?: string;
    perMinute?: number;
    perDay?: number;
    expiresInMs?: number;
  }): Promise<{ key: string; keyId: string; account: string }>;
  /** Runs raw SQL on the app's storage from a separate connection, to break it on purpose. */
  execute(sql: string): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, as an operator would set them. */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
}

let accountCounter = 0;

/**
 * Which backends the HTTP suites run on: `sqlite` (SQLite file + memory limiter, the default) or
 * `postgres` (a fresh PostgreSQL schema + Redis with a fresh key prefix). `npm test` runs the HTTP
 * suites once per pair.
 */
export const TEST_BACKEND = process.env.PETSTORE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

let shared: Promise<{ postgres: Backend; redis: RedisBackend }> | undefined;

interface BackendEnvironment {
  readonly env: Record<string, string>;
  execute(databaseUrl: string, sql: string): Promise<void>;
  cleanup(): Promise<void>;
}

async function backendEnvironment(directory: string): Promise<BackendEnvironment> {
  if (TEST_BACKEND === 'sqlite') {
    const sqlite = sqliteBackend();
    return {
      env: { DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}` },
      execute: sqlite.execute,
      cleanup: sqlite.cleanup,
    };
  }
  shared ??= Promise.all([postgresBackend(), redisBackend()]).then(([postgres, redis]) => ({ postgres, redis }));
  const { postgres, redis } = await shared;
  const reason = postgres.skip ?? redis.skip;
  if (reason) throw new Error(reason);
  return {
    env: { DATABASE_URL: await postgres.freshDatabaseUrl(), REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() },
    execute: postgres.execute,
    cleanup: async () => {
      await postgres.cleanup();
      await redis.cleanup();
    },
  };
}

/**
 * The real app, listening on an ephemeral port, over its own fresh storage (see TEST_BACKEND).
 * DATABASE_URL in `env` overrides the storage.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  const backend = await backendEnvironment(directory);
  const config = loadConfig({ ...backend.env, LOG_LEVEL: 'silent', DEMO_BOOTSTRAP: 'false', ...options.env });
  const clock = options.clock ?? new ManualClock(new Date('2026-06-01T12:00:00Z'));
  const services = await buildServices(config, { clock });
  await services.store.migrate();
  const app = await buildApp(services);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    services,
    url,
    clock,
    async newKey(keyOptions = {}) {
      accountCounter += 1;
      const account = `acct-${process.pid}-${Date.now()}-${accountCounter}`;
      await services.accounts.createAccount(account, {
        plan: keyOptions.plan ?? 'free',
        perMinute: keyOptions.perMinute,
        perDay: keyOptions.perDay,
      });
      const created = await services.accounts.createKey(account, keyOptions.expiresInMs);
      return { key: created.key, keyId: created.record.id, account };
    },
    execute: (sql) => backend.execute(config.databaseUrl, sql),
    async close() {
      await app.close();
      await services.close();
      await backend.cleanup();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
