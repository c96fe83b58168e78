import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../../src/clock.ts';
import { ManualClock } from './manual-clock.ts';
import { buildServices, type Services } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import type { LimitWindows } from '../../src/domain/limit-windows.ts';
import { buildApp } from '../../src/http/app.ts';
import { postgresBackend, sqliteBackend } from './backends.ts';
import { redisBackend } from './redis-backend.ts';

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
    /** Scope names as an operator types them; every scope when absent. */
    scopes?: readonly string[];
  }): Promise<{ key: string; keyId: string; account: string }>;
  /** Runs raw SQL on the app's storage from a separate connection, to break it on purpose. */
  execute(sql: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where a test app keeps its data and counts its requests: `sqlite` is a SQLite file with the
 * in-memory limiter (the default); `postgres` is a fresh PostgreSQL schema with Redis under a fresh
 * key prefix. `describeEachBackend` (each-backend.ts) runs a suite once per pair.
 */
export interface BackendPair {
  readonly name: 'sqlite' | 'postgres';
  /** How suite titles name the pair. */
  readonly title: string;
  /** Why the pair cannot run here; node:test's `skip` option. */
  readonly skip?: string;
}

export const SQLITE_PAIR: BackendPair = { name: 'sqlite', title: 'SQLite file + in-memory limiter' };

export interface TestAppOptions {
  /** Environment overrides, as an operator would set them. */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  /** The storage and limiter pair; SQLite + in-memory unless told. DATABASE_URL in `env` overrides the storage. */
  readonly backend?: BackendPair;
  /** The process logger; silent unless given (tests that read log lines pass one). */
  readonly logger?: Logger;
  /** The accounts' limit windows, as the composition root takes them; LIMIT_WINDOWS unless given. */
  readonly limitWindows?: LimitWindows;
}

let accountCounter = 0;

interface BackendEnvironment {
  readonly env: Record<string, string>;
  execute(databaseUrl: string, sql: string): Promise<void>;
  cleanup(): Promise<void>;
}

async function backendEnvironment(pair: BackendPair, directory: string): Promise<BackendEnvironment> {
  if (pair.name === 'sqlite') {
    const sqlite = sqliteBackend();
    return {
      env: { DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}` },
      execute: sqlite.execute,
      cleanup: sqlite.cleanup,
    };
  }
  // A schema and a key prefix of this app's own: closing it removes nothing another app still uses.
  const [postgres, redis] = await Promise.all([postgresBackend(), redisBackend()]);
  const reason = postgres.skip ?? redis.skip;
  if (reason) throw new Error(reason);
  return {
    env: { DATABASE_URL: postgres.databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() },
    execute: postgres.execute,
    cleanup: async () => {
      await postgres.cleanup();
      await redis.cleanup();
    },
  };
}

/** The real app, listening on an ephemeral port of 127.0.0.1, over its own fresh storage. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  const backend = await backendEnvironment(options.backend ?? SQLITE_PAIR, directory);
  const config = loadConfig({ ...backend.env, LOG_LEVEL: 'silent', DEMO_BOOTSTRAP: 'false', ...options.env });
  const clock = options.clock ?? new ManualClock(new Date('2026-06-01T12:00:00Z'));
  const services = await buildServices(config, { clock, logger: options.logger, limitWindows: options.limitWindows });
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
      const created = await services.accounts.createKey(account, {
        expiresInMs: keyOptions.expiresInMs,
        scopes: keyOptions.scopes,
      });
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
