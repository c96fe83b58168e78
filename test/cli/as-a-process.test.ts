import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresBackend } from '../support/backends.ts';
import { assertFails, assertOk, jsonOf, shown, tableOf, type AccountShowJson } from '../support/cli-assertions.ts';
import { NPM_CLI, runCliLaunched, runCliProcess, type CliResult } from '../support/cli-runner.ts';
import { accountWithKey, getPets, keyOf, sandbox } from '../support/cli-sandbox.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { freePort, startServerProcess } from '../support/server-process.ts';

/**
 * The CLI as a shell runs it, where the process boundary is under test: exit statuses and streams,
 * `node src/cli/main.ts` and `npm run -s petstore --` start-up, ending on its own, and signals.
 * A closed pipe is in test/cli/closed-pipe.test.ts.
 */

const ROOT = join(import.meta.dirname, '..', '..');

const [redis, postgres] = await Promise.all([redisBackend(), postgresBackend()]);

describe('petstore CLI as a process', { concurrency: true }, () => {
  after(() => Promise.all([redis.cleanup(), postgres.cleanup()]));

  it('exit statuses, stdout and stderr as a shell sees them', async (t) => {
    const box = sandbox(t);
    const run = (...args: string[]): Promise<CliResult> => runCliProcess(args, { DATABASE_URL: box.databaseUrl });
    // The commands that never open the store run beside those that do, which run one after the other.
    const [onStore, unknown, bare, badConfig] = await Promise.all([
      (async () => [
        await run('account', 'create', '--name', 'acme', '--plan', 'pro'),
        await run('account', 'create', '--name', 'acme', '--plan', 'free', '--json'),
        await run('account', 'show', '--name', 'nobody'),
      ])(),
      run('acount', 'list'),
      run(),
      runCliProcess(['account', 'list', '--json'], { DATABASE_URL: 'mysql://x' }),
    ]);
    const [created, taken, missing] = onStore as [CliResult, CliResult, CliResult];
    const [row] = tableOf(created);
    assert.equal(row?.NAME, 'acme', shown(created));
    assert.equal(assertFails(taken, 1, /acme/), 'conflict');
    assertFails(missing, 1, /nobody/);
    assertFails(unknown, 2, /^petstore: unknown command 'acount list'; did you mean account list\?\n$/);
    assert.equal(bare.status, 2, shown(bare));
    assert.equal(bare.stdout, '', shown(bare));
    assert.match(bare.stderr, /^usage: petstore /, shown(bare));
    assert.equal(assertFails(badConfig, 2, /DATABASE_URL/), 'invalid_config');
  });

  it('npm run -s petstore -- … prints only what the CLI prints, and ends with its exit status', async (t) => {
    const box = sandbox(t);
    const env = { DATABASE_URL: box.databaseUrl };
    const [version, missing] = await Promise.all([
      runCliLaunched(NPM_CLI, ['--version'], env),
      runCliLaunched(NPM_CLI, ['account', 'show', '--name', 'nobody'], env),
    ]);
    assertOk(version);
    assert.match(version.stdout, /^petstore \d+\.\d+\.\d+\S*\n$/, shown(version));
    assertFails(missing, 1, /nobody/);
  });

  it(
    'ends on its own over PostgreSQL and Redis: a command closes every connection it opens',
    { skip: postgres.skip ?? redis.skip },
    async () => {
      const env = { DATABASE_URL: postgres.databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() };
      // A connection left open would keep the process alive until runCliProcess kills it and fails.
      assertOk(await runCliProcess(['account', 'create', '--name', 'acme', '--plan', 'free'], env));
      const account = jsonOf<AccountShowJson>(
        await runCliProcess(['account', 'show', '--name', 'acme', '--json'], env),
      );
      assert.deepEqual(
        account.windows?.map((window) => window.remaining),
        [60, 1000],
        'the windows, read from Redis',
      );
    },
  );

  it('key list shows the last use flushed by SIGTERM', async (t) => {
    const box = sandbox(t);
    const { key, id } = await accountWithKey(box, 'acme');
    const server = await startServerProcess({ DATABASE_URL: box.databaseUrl });
    t.after(() => server.kill('SIGKILL'));
    const sent = Date.now();
    assert.equal((await getPets(server, key)).status, 200);
    await server.kill('SIGTERM');
    const usedAt = (await keyOf(box, 'acme', id)).lastUsedAt;
    assert.ok(usedAt !== null, 'shutdown flushes the last-used times');
    assert.ok(
      Date.parse(usedAt) >= sent - 5 && Date.parse(usedAt) <= Date.now(),
      `lastUsedAt is the time of the request, got ${usedAt}`,
    );
  });

  it('runs the server, which stops with exit 0 on SIGTERM', async (t) => {
    const box = sandbox(t);
    const port = await freePort();
    const child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: box.databaseUrl,
        PORT: String(port),
        DEMO_BOOTSTRAP: 'false',
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    // About 2 s alone; far longer when the whole suite shares two cores.
    const deadline = Date.now() + 45_000;
    let healthy = false;
    while (!healthy && Date.now() < deadline && child.exitCode === null) {
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (!healthy) await sleep(50);
    }
    assert.ok(healthy, `petstore serve answers /healthz (stdout: ${stdout})`);
    const { key } = await accountWithKey(box, 'acme');
    const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(response.status, 200);
    await response.text();
    child.kill('SIGTERM');
    assert.equal(await exited, 0, `exit code after SIGTERM (stdout: ${stdout})`);
  });
});
