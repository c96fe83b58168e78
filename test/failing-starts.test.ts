import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pgBouncerSkip } from './support/pgbouncer.ts';
import { StartedParts } from './support/started-parts.ts';

/**
 * A suite whose servers cannot start fails within seconds, names what did not start, and leaves no
 * port, proxy or child process behind: the runner's timeout is never what ends it.
 */

async function listening(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Whether something accepts connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('parts a suite starts', () => {
  it('a part that fails is named, and the parts started before it are stopped', async () => {
    const parts = new StartedParts();
    const proxy = await parts.start('a proxy', listening, close);
    const port = portOf(proxy);
    await assert.rejects(
      parts.start('PgBouncer', () => Promise.reject<Server>(new Error('exited (1)')), close),
      /^Error: PgBouncer did not start: exited \(1\)$/,
    );
    assert.equal(await accepts(port), false, 'the proxy still listens');
  });

  it('a part still starting when another fails is stopped once it is up', async () => {
    const parts = new StartedParts();
    let up: (server: Server) => void = () => undefined;
    const slow = new Promise<Server>((resolve) => (up = resolve));
    const starting = parts.start('the service', () => slow, close);
    await assert.rejects(
      parts.start('chromium', () => Promise.reject<Server>(new Error('no display')), close),
      /chromium did not start: no display/,
    );
    const server = await listening();
    up(server);
    await starting;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(server.listening, false, 'the late part was left running');
  });

  it('a start that hangs fails at its deadline, and is stopped if it ever comes up', async () => {
    const parts = new StartedParts();
    let up: (server: Server) => void = () => undefined;
    const hanging = new Promise<Server>((resolve) => (up = resolve));
    await assert.rejects(
      parts.start('Redis Cluster', () => hanging, close, 50),
      /Redis Cluster did not start: still starting after 50 ms/,
    );
    const server = await listening();
    up(server);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(server.listening, false);
  });

  it('stopping goes on past a part that fails to stop, and names it', async () => {
    const parts = new StartedParts();
    const first = await parts.start('a proxy', listening, close);
    await parts.start(
      'a store',
      () => Promise.resolve('store'),
      () => Promise.reject(new Error('pool busy')),
    );
    await assert.rejects(parts.stopAll(), /stopping failed for a store: pool busy/);
    assert.equal(first.listening, false);
  });
});

const bouncerSkip = await pgBouncerSkip();

describe('a PgBouncer suite whose PgBouncer cannot start', { skip: bouncerSkip }, () => {
  it('fails in seconds, naming PgBouncer, and its process ends by itself', async () => {
    // A `pgbouncer` that exits at once, first on PATH: what a broken install or a bad setting does.
    const bin = mkdtempSync(join(tmpdir(), 'petstore-broken-pgbouncer-'));
    try {
      writeFileSync(join(bin, 'pgbouncer'), '#!/bin/sh\necho "FATAL broken on purpose" >&2\nexit 1\n');
      chmodSync(join(bin, 'pgbouncer'), 0o755);
      const started = Date.now();
      const { code, output } = await runTestFile('test/storage/pgbouncer-cancel.test.ts', {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
      });
      const tookMs = Date.now() - started;
      assert.notEqual(code, 0);
      assert.match(output, /PgBouncer did not start: pgbouncer exited \(1\): FATAL broken on purpose/);
      assert.doesNotMatch(output, /Promise resolution is still pending/);
      // Loading the file and starting a node process take a few seconds on a busy machine; a hang took minutes.
      assert.ok(tookMs < 30_000, `the suite took ${tookMs} ms`);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

/** Runs one test file in a node:test process of its own, as `npm test` would; kills it after a minute. */
function runTestFile(file: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  // Not the global setup's PgBouncer: the file must start its own. Nor this runner's child protocol.
  const inherited = { ...process.env };
  delete inherited.PETSTORE_TEST_PGBOUNCER_URL;
  delete inherited.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['--conditions=@petstore/source', '--test', file], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}
