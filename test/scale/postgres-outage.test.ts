import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { buildServices, createLogger } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { postgresBackend, type Backend } from '../support/backends.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/** PostgreSQL going away under a running instance: 503 within the timeout, /readyz fails, recovery. */
const postgres: Backend = await postgresBackend();
const TIMEOUT_MS = 500;

describe('PostgreSQL unreachable', { skip: postgres.skip }, () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let headers: Record<string, string>;

  before(async () => {
    proxy = await startTcpProxy(5432);
    const direct = await postgres.freshDatabaseUrl();
    const throughProxy = direct.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
    app = await startTestApp({
      env: { DATABASE_URL: throughProxy, STORAGE_TIMEOUT_MS: String(TIMEOUT_MS), KEY_CACHE_TTL_MS: '0' },
    });
    const { key } = await app.newKey({ plan: 'business' });
    headers = { authorization: `Bearer ${key}` };
  });

  after(async () => {
    await app.close();
    await proxy.close();
    await postgres.cleanup();
  });

  async function expectUnavailable(): Promise<void> {
    const started = performance.now();
    const response = await fetch(`${app.url}/v1/pets`, { headers });
    const elapsed = performance.now() - started;
    assert.equal(response.status, 503);
    const body = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
    assert.equal(body.code, 'service_unavailable');
    assert.ok(elapsed < TIMEOUT_MS * 3 + 500, `answered after ${Math.round(elapsed)} ms`);
    assert.equal((await fetch(`${app.url}/readyz`)).status, 503);
  }

  async function expectRecovered(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await fetch(`${app.url}/v1/pets`, { headers });
      if (response.status === 200) break;
      assert.ok(Date.now() < deadline, `still ${response.status} after PostgreSQL came back`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await fetch(`${app.url}/readyz`)).status, 200);
  }

  test('refused connections: 503 service_unavailable at once, then recovery by itself', async () => {
    assert.equal((await fetch(`${app.url}/v1/pets`, { headers })).status, 200);
    await proxy.refuse();
    await expectUnavailable();
    proxy.forward();
    await expectRecovered();
  });

  test('a silent network: 503 within the storage timeout, never a hang, then recovery', async () => {
    proxy.blackhole();
    await expectUnavailable();
    proxy.forward();
    await expectRecovered();
  });
});

describe('PostgreSQL unreachable: the log', { skip: postgres.skip }, () => {
  test('50 requests during an outage give one warning line, with the cause and no stack', async () => {
    const proxy = await startTcpProxy(5432);
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const direct = await postgres.freshDatabaseUrl();
    const app = await startTestApp({
      env: {
        DATABASE_URL: direct.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
        STORAGE_TIMEOUT_MS: String(TIMEOUT_MS),
        KEY_CACHE_TTL_MS: '0',
      },
      logger,
    });
    try {
      const { key } = await app.newKey({ plan: 'business' });
      await proxy.refuse();
      for (let i = 0; i < 50; i += 1) {
        const response = await fetch(`${app.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(response.status, 503);
        await response.arrayBuffer();
      }
      const deadline = Date.now() + 5000;
      while (lines.filter((line) => line.includes('"msg":"request"')).length < 50) {
        assert.ok(Date.now() < deadline, 'the access lines of the 50 requests');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const warnings = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string; cause?: string; suppressed?: number })
        .filter((line) => line.level >= 40 && line.msg.startsWith('storage unavailable'));
      assert.ok(
        warnings.length >= 1 && warnings.length <= 2,
        `${warnings.length} warning lines:\n${JSON.stringify(warnings)}`,
      );
      for (const line of lines) assert.doesNotMatch(line, /"stack"|\\n\s+at /, `a stack in the log: ${line}`);
      const [first] = warnings;
      assert.match(first?.msg ?? '', /^storage unavailable/);
      assert.equal(first?.suppressed, 0);
      assert.ok(first?.cause, `the first warning says what failed: ${JSON.stringify(first)}`);
    } finally {
      await app.close();
      await proxy.close();
      await postgres.cleanup();
    }
  });
});

describe('PostgreSQL closing an idle pooled connection', { skip: postgres.skip }, () => {
  test('is logged as a warning, and the next query opens a new connection', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const databaseUrl = await postgres.freshDatabaseUrl();
    const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', DEMO_BOOTSTRAP: 'false' });
    const services = await buildServices(config, { logger });
    try {
      await services.store.migrate();
      await services.store.ping();
      await postgres.execute(
        databaseUrl,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'petstore' AND state = 'idle' AND pid <> pg_backend_pid()`,
      );
      const deadline = Date.now() + 5000;
      while (!lines.some((line) => line.includes('PostgreSQL closed an idle connection'))) {
        assert.ok(Date.now() < deadline, `no warning logged; lines: ${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const warning = JSON.parse(lines.find((line) => line.includes('idle connection')) ?? '{}') as { level: number };
      assert.equal(warning.level, 40);
      await services.store.ping();
    } finally {
      await services.close();
      await postgres.cleanup();
    }
  });
});
