import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ManualClock, type Clock } from '../../src/clock.ts';
import { buildServices, type Services } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/build-app.ts';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Base URL of the app listening on an ephemeral port of 127.0.0.1. */
  readonly url: string;
  readonly clock: Clock;
  /** A fresh account (free plan unless told) and a key for it. */
  newKey(options?: { plan?: string; perMinute?: number; perDay?: number; expiresInMs?: number }): Promise<{ key: string; keyId: string; account: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, as an operator would set them. */
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
}

let accountCounter = 0;

/**
 * The real app over a real SQLite file in its own temporary directory, listening on an ephemeral
 * port. DATABASE_URL in `env` (e.g. postgres://…) selects another backend.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}`, LOG_LEVEL: 'silent', DEMO_BOOTSTRAP: 'false', ...options.env });
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
      await services.accounts.createAccount(account, { plan: keyOptions.plan ?? 'free', perMinute: keyOptions.perMinute, perDay: keyOptions.perDay });
      const created = await services.accounts.createKey(account, keyOptions.expiresInMs);
      return { key: created.key, keyId: created.record.id, account };
    },
    async close() {
      await app.close();
      await services.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
