import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { request, type HttpTarget } from './support/http-client.ts';
import { freePort, startServerProcess, type ServerProcess } from './support/server-process.ts';

/**
 * The real server (src/server.ts) as a child process, as an operator starts it: the demo key on
 * first start (README, "API keys"), configuration errors (README,
 * "Configuration") and graceful shutdown on SIGTERM/SIGINT (README, "Operations").
 */

const ROOT = join(import.meta.dirname, '..');
const KEYS = /pst_[0-9A-Za-z]{36}/g;

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** src/server.ts as a child whose exit status is observable (ServerProcess does not expose it). */
interface Child {
  readonly url: string;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<Exit>;
  signal(signal: NodeJS.Signals): void;
  /** Signals the child's process group, as a terminal does on Ctrl-C; needs `detached`. */
  signalGroup(signal: NodeJS.Signals): void;
  /** Resolves once /healthz answers; rejects if the process exits first. */
  healthy(): Promise<void>;
}

function storeUrl(t: TestContext): string {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-start-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return `sqlite:${join(directory, 'petstore.db')}`;
}

/** How the server is started: `node src/server.ts` unless told, in a process group of its own if `detached`. */
interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly detached?: boolean;
}

const NODE_SERVER: Launch = { command: process.execPath, args: ['src/server.ts'] };

function spawnServer(t: TestContext, env: Record<string, string>, port: number, launch = NODE_SERVER): Child {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(launch.command, launch.args, {
    cwd: ROOT,
    detached: launch.detached ?? false,
    env: {
      PATH: process.env.PATH ?? '',
      ...(process.env.HOME === undefined ? {} : { HOME: process.env.HOME }),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      DEMO_BOOTSTRAP: 'false',
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close' rather than 'exit': every byte the child wrote has been read by then.
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  t.after(() => {
    // A process group is killed whole, so that a server npm started does not outlive a failed test.
    if (launch.detached) killGroup(child.pid ?? 0);
    else if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    pid: child.pid ?? 0,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    signal: (signal) => void child.kill(signal),
    signalGroup: (signal) => process.kill(-(child.pid ?? 0), signal),
    async healthy() {
      // npm start takes a few seconds more than node alone, and more on a crowded machine.
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`the server did not answer /healthz: ${stderr} ${stdout}`);
        const ok = await request({ url }, '/healthz').then(
          (response) => response.status === 200,
          () => false,
        );
        if (ok) return;
        await sleep(25);
      }
    },
  };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group has ended, as it should.
  }
}

/** Output printed before the server answered may still be in the pipe: wait for it briefly. */
async function outputContaining(server: ServerProcess, text: string): Promise<string> {
  const deadline = Date.now() + 2000;
  while (!server.output().includes(text) && Date.now() < deadline) await sleep(20);
  return server.output();
}

function distinctKeys(output: string): string[] {
  return [...new Set(output.match(KEYS) ?? [])];
}

interface AccessLine {
  readonly msg: string;
  readonly pid?: number;
  readonly method?: string;
  readonly url?: string;
  readonly status?: number;
}

function logLines(stdout: string): AccessLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as AccessLine);
}

/**
 * The first log line whose message starts with `prefix`. Lines reach stdout within a second of being
 * logged (the logger buffers), but the wait also covers the start itself, which takes seconds on a busy machine.
 */
async function loggedLine(child: Child, prefix: string): Promise<AccessLine> {
  const find = () => logLines(child.stdout()).find((line) => line.msg.startsWith(prefix));
  const deadline = Date.now() + 20_000;
  while (find() === undefined && Date.now() < deadline) await sleep(50);
  const line = find();
  assert.ok(line, `the server logged "${prefix}…": ${child.stdout()}`);
  return line;
}

/** A POST whose headers and half of its body are sent now, the rest when `finish()` is called. */
function slowCreate(
  url: string,
  key: string,
  name: string,
): { finish(): void; response: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ name, categoryId: 1 });
  const half = Math.floor(body.length / 2);
  const outgoing = httpRequest(`${url}/v1/pets`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    outgoing.once('error', reject);
    outgoing.once('response', (incoming: IncomingMessage) => {
      let text = '';
      incoming.on('data', (chunk: Buffer) => (text += chunk.toString()));
      incoming.once('end', () => resolve({ status: incoming.statusCode ?? 0, body: text }));
      incoming.once('error', reject);
    });
  });
  outgoing.flushHeaders();
  outgoing.write(body.slice(0, half));
  return { finish: () => void outgoing.end(body.slice(half)), response };
}

describe('server start-up', { concurrency: 3 }, () => {
  it('prints the demo key once on an empty store; it works on the free plan; a second start prints none', async (t) => {
    const databaseUrl = storeUrl(t);
    const first = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_BOOTSTRAP: 'true' });
    t.after(() => first.kill('SIGKILL'));
    const output = await outputContaining(first, 'curl');
    const keys = distinctKeys(output);
    assert.equal(keys.length, 1, `exactly one key is printed, got ${JSON.stringify(keys)} in ${output}`);
    const key = keys[0] as string;
    assert.ok(
      output.split('\n').some((line) => line.trim() === key),
      `the key stands alone on a line: ${output}`,
    );
    assert.match(
      output,
      new RegExp(`curl -H "Authorization: Bearer ${key}" http://[^\\s]+:${first.port}/v1/pets`),
      `a curl hint with the key and the port: ${output}`,
    );
    assert.match(output, /"demo"/, 'the output names the demo account');

    const response = await request(first, '/v1/pets', { key });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.json(), []);
    assert.equal(response.headers.get('x-ratelimit-limit'), '60', 'the free plan: 60 per minute');
    assert.equal(response.headers.get('ratelimit-policy'), '"minute";q=60;w=60, "day";q=1000;w=86400');
    await first.kill('SIGTERM');

    const second = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_BOOTSTRAP: 'true' });
    t.after(() => second.kill('SIGKILL'));
    const again = await request(second, '/v1/pets', { key });
    assert.equal(again.status, 200, 'the demo key survives a restart');
    await second.kill('SIGTERM');
    assert.deepEqual(
      distinctKeys(second.output()),
      [],
      `no key is printed on a store that has accounts: ${second.output()}`,
    );
    assert.doesNotMatch(second.output(), /curl/);
    assert.match(
      second.output(),
      /no new API key printed.*npm run -s petstore -- key create --account demo\n/i,
      `a start without a new key says how to create one: ${second.output()}`,
    );
  });

  it('the demo key belongs to the account "demo" on the free plan', async (t) => {
    const databaseUrl = storeUrl(t);
    const server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_BOOTSTRAP: 'true' });
    t.after(() => server.kill('SIGKILL'));
    const [key] = distinctKeys(await outputContaining(server, 'curl'));
    assert.ok(key !== undefined);
    const remaining: string[] = [];
    for (let call = 0; call < 3; call += 1) {
      const response = await request(server, '/v1/pets', { key });
      assert.equal(response.status, 200);
      remaining.push(response.headers.get('x-ratelimit-remaining') ?? '');
      assert.match(response.headers.get('ratelimit') ?? '', /^"minute";r=\d+;t=\d+, "day";r=\d+;t=\d+$/);
    }
    assert.deepEqual(remaining, ['59', '58', '57']);
    await server.kill('SIGTERM');
    const listed = await promisify(execFile)(process.execPath, ['src/cli/main.ts', 'account', 'list', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl },
    });
    const accounts = JSON.parse(listed.stdout) as Array<{ name: string; plan: string }>;
    assert.deepEqual(
      accounts.map((account) => ({ name: account.name, plan: account.plan })),
      [{ name: 'demo', plan: 'free' }],
    );
  });

  it('does not create the demo key with DEMO_BOOTSTRAP=false', async (t) => {
    const server = await startServerProcess({ DATABASE_URL: storeUrl(t), DEMO_BOOTSTRAP: 'false' });
    await server.kill('SIGTERM');
    assert.deepEqual(distinctKeys(server.output()), []);
    assert.doesNotMatch(server.output(), /key create/, 'without the demo bootstrap, no hint either');
  });

  for (const [name, value] of [
    ['PORT', 'abc'],
    ['PORT', '8080.5'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['KEY_CACHE_TTL_MS', '5000'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '0.0.0.0/0'],
    ['METRICS_PORT', 'http'],
    ['CORS_MAX_AGE_SECONDS', 'ten'],
  ] as const) {
    it(`exits with status 2 and one line naming ${name} when ${name}=${value}`, async (t) => {
      const child = spawnServer(t, { DATABASE_URL: storeUrl(t), [name]: value }, await freePort());
      const exit = await Promise.race([child.exited, sleep(10_000, undefined, { ref: false })]);
      assert.ok(exit !== undefined, 'the process exits at once');
      assert.deepEqual(exit, { code: 2, signal: null }, child.stderr());
      assert.match(child.stderr(), /^petstore: [^\n]+\n$/, `one line on stderr: ${JSON.stringify(child.stderr())}`);
      assert.ok(child.stderr().includes(name), `the message names ${name}: ${child.stderr()}`);
      assert.equal(child.stdout(), '', 'nothing on stdout');
    });
  }

  it('SIGTERM: in-flight requests complete, new ones are refused, logs are flushed, exit code 0', async (t) => {
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t), DEMO_BOOTSTRAP: 'true' }, await freePort());
    await child.healthy();
    const [key] = distinctKeys(child.stdout());
    assert.ok(key !== undefined, `the demo key is printed: ${child.stdout()}`);

    // A burst of requests answered before the signal: their access-log lines must reach stdout.
    const burst = await Promise.all(Array.from({ length: 20 }, () => request(child, '/v1/pets', { key })));
    assert.deepEqual(
      burst.map((answer) => answer.status),
      Array.from({ length: 20 }, () => 200),
    );
    // Requests in flight when the signal arrives: headers and half a body sent.
    const slow = Array.from({ length: 3 }, (_, index) => slowCreate(child.url, key, `in-flight-${index}`));
    await sleep(300);
    child.signal('SIGTERM');
    await sleep(300);
    assert.equal(
      await Promise.race([child.exited.then(() => 'exited'), sleep(0).then(() => 'running')]),
      'running',
      'the server waits for in-flight requests',
    );
    const late = await request(child, '/v1/pets', { key }).then(
      (response) => response.status,
      // fetch fails with a TypeError when the connection is refused; a failed contract check is no refusal.
      (error: unknown) => (error instanceof TypeError ? 'refused' : Promise.reject(error)),
    );
    assert.ok(
      late === 'refused' || late === 503,
      `a new request during shutdown is refused or answered 503, got ${String(late)}`,
    );

    for (const request of slow) request.finish();
    const answers = await Promise.all(slow.map((request) => request.response));
    for (const [index, answer] of answers.entries()) {
      assert.equal(answer.status, 201, `in-flight request ${index} completes: ${answer.body}`);
      assert.equal((JSON.parse(answer.body) as { name: string }).name, `in-flight-${index}`);
    }

    assert.deepEqual(await child.exited, { code: 0, signal: null }, child.stderr());
    const stdout = child.stdout();
    assert.match(stdout, /shutting down/);
    const lines = logLines(stdout);
    const requests = lines.filter((line) => line.msg === 'request');
    assert.equal(
      requests.filter((line) => line.method === 'GET' && line.url === '/v1/pets' && line.status === 200).length,
      20,
      'every answered GET is in the access log',
    );
    assert.equal(
      requests.filter((line) => line.method === 'POST' && line.status === 201).length,
      3,
      'the in-flight requests are in the access log',
    );
    assert.equal(
      stdout.split(key).length - 1,
      2,
      'the key appears only in the start-up banner (alone and in the curl hint), never in the logs',
    );
    assert.equal(child.stderr(), '');
  });

  it('serves metrics on their own listener only, reports its port, and closes it on SIGTERM', async (t) => {
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t), METRICS_PORT: '0' }, await freePort());
    await child.healthy();
    const listening = await loggedLine(child, 'Metrics listening at ');
    const metricsUrl = listening.msg.slice('Metrics listening at '.length);
    assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.notEqual(new URL(metricsUrl).port, new URL(child.url).port);
    const operatorListener: HttpTarget = { url: new URL(metricsUrl).origin, servesApi: false };
    const scraped = await request(operatorListener, '/metrics');
    assert.equal(scraped.status, 200);
    assert.match(scraped.text, /^# TYPE process_cpu_seconds_total counter$/m, 'process metrics are collected');
    const publicMetrics = await request(child, '/metrics');
    assert.equal(publicMetrics.status, 401, 'not on the public listener');
    assert.doesNotMatch(publicMetrics.text, /petstore_|process_/);
    child.signal('SIGTERM');
    assert.deepEqual(await child.exited, { code: 0, signal: null }, child.stderr());
    await assert.rejects(request(operatorListener, '/metrics'), 'the metrics listener is closed');
  });

  it('names the API, /docs and /console/login at the ports bound, with PORT=0 and METRICS_PORT=0', async (t) => {
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t), DEMO_BOOTSTRAP: 'true', METRICS_PORT: '0' }, 0);
    const bound = String.raw`(http://127\.0\.0\.1:(\d+))`;
    const server = new RegExp(String.raw`^Server listening at ${bound} \(API at \1/v1, docs at \1/docs\)$`).exec(
      (await loggedLine(child, 'Server listening at ')).msg,
    );
    assert.ok(server, `the public line names the API and the docs page: ${child.stdout()}`);
    const operator = new RegExp(
      String.raw`^Operator listener at ${bound} \(console at \1/console/login, admin API at \1/admin/v1; `,
    ).exec((await loggedLine(child, 'Operator listener at ')).msg);
    assert.ok(operator, `the operator line names the console's login page and the admin API: ${child.stdout()}`);
    const [, origin = '', port = ''] = server;
    const [, operatorOrigin = '', operatorPort = ''] = operator;
    assert.ok(Number(port) > 0 && Number(operatorPort) > 0 && port !== operatorPort, `${port}, ${operatorPort}`);
    assert.equal(
      (await loggedLine(child, 'Metrics listening at ')).msg,
      `Metrics listening at ${operatorOrigin}/metrics`,
    );
    assert.equal(
      logLines(child.stdout()).filter((line) => line.msg.startsWith('Server listening at ')).length,
      1,
      'the operator listener is not announced as "Server listening"',
    );

    const [key] = distinctKeys(child.stdout());
    assert.ok(key !== undefined, child.stdout());
    assert.ok(
      child.stdout().includes(`Try: curl -H "Authorization: Bearer ${key}" ${origin}/v1/pets\n`),
      `the curl hint names the port bound: ${child.stdout()}`,
    );
    // Each address named answers there.
    const api: HttpTarget = { url: origin };
    assert.equal((await request(api, '/v1/pets', { key })).status, 200);
    const docs = await request(api, '/docs');
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /^text\/html/);
    const login = await request({ url: operatorOrigin, servesApi: false }, '/console/login');
    assert.equal(login.status, 200);
    assert.match(login.headers.get('content-type') ?? '', /^text\/html/);
    child.signal('SIGTERM');
    assert.deepEqual(await child.exited, { code: 0, signal: null }, child.stderr());
  });

  it('exits with status 1 naming METRICS_PORT when the metrics port is taken', async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const { port } = taken.address() as AddressInfo;
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t), METRICS_PORT: String(port) }, await freePort());
    const exit = await Promise.race([child.exited, sleep(15_000, undefined, { ref: false })]);
    assert.deepEqual(exit, { code: 1, signal: null }, child.stderr());
    assert.match(child.stderr(), /^petstore: could not start: [^\n]*METRICS_PORT[^\n]*EADDRINUSE[^\n]*\n$/);
  });

  it('exits with status 1 and one line naming PORT or HOST when the public address cannot be bound', async (t) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const { port } = taken.address() as AddressInfo;
    const busy = spawnServer(t, { DATABASE_URL: storeUrl(t) }, port);
    // 192.0.2.0/24 is reserved for documentation: no machine has it.
    const foreign = spawnServer(t, { DATABASE_URL: storeUrl(t), HOST: '192.0.2.1' }, await freePort());
    for (const child of [busy, foreign]) {
      const exit = await Promise.race([child.exited, sleep(15_000, undefined, { ref: false })]);
      assert.deepEqual(exit, { code: 1, signal: null }, child.stderr());
    }
    assert.equal(
      busy.stderr(),
      `petstore: could not start: PORT ${port} on HOST 127.0.0.1 is already in use (EADDRINUSE)\n`,
    );
    assert.equal(
      foreign.stderr(),
      'petstore: could not start: HOST 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)\n',
    );
  });

  it('SIGTERM while a client keeps sending a refused upload: exits 0 in seconds, not at the deadline', async (t) => {
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t), SHUTDOWN_TIMEOUT_MS: '8000' }, await freePort());
    await child.healthy();
    const { port } = new URL(child.url);
    const upload = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    upload.on('error', () => undefined);
    await new Promise((resolve) => upload.once('connect', resolve));
    // No key, so it is refused before its body, which keeps coming a little at a time.
    upload.write(
      'POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n40000\r\n',
    );
    const trickle = setInterval(() => upload.writable && upload.write('x'.repeat(100)), 50);
    try {
      await sleep(300);
      const signalled = Date.now();
      child.signal('SIGTERM');
      assert.deepEqual(await child.exited, { code: 0, signal: null }, child.stderr());
      assert.ok(Date.now() - signalled < 5000, `exited ${Date.now() - signalled} ms after SIGTERM`);
      assert.doesNotMatch(child.stdout(), /shutdown timed out/);
    } finally {
      clearInterval(trickle);
      upload.destroy();
    }
  });

  it('SIGINT also shuts down with exit code 0', async (t) => {
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t) }, await freePort());
    await child.healthy();
    child.signal('SIGINT');
    assert.deepEqual(await child.exited, { code: 0, signal: null }, child.stderr());
    assert.match(child.stdout(), /shutting down/);
  });
});

/**
 * `npm start` as an operator or a supervisor runs it: npm (on whatever Node is installed) runs the
 * start script in a shell, which must give way to the server, or the signal that stops npm never
 * reaches the server and it goes on holding the port.
 */
describe('npm start', { concurrency: 2 }, () => {
  // In a process group of its own, so that cleaning up after a failure reaches the server too.
  const NPM_START: Launch = { command: 'npm', args: ['start'], detached: true };

  /** The server's own pid, from its log (lines reach stdout within about a second): not npm's. */
  async function serverPid(child: Child): Promise<number> {
    const { pid } = await loggedLine(child, 'Server listening at ');
    assert.ok(pid !== undefined, `the line has the pid: ${child.stdout()}`);
    return pid;
  }

  async function assertStoppedGracefully(child: Child, pid: number, port: number): Promise<void> {
    const exit = await Promise.race([child.exited, sleep(20_000, undefined, { ref: false })]);
    assert.deepEqual(exit, { code: 0, signal: null }, `npm exits 0 once the server has: ${child.stderr()}`);
    assert.equal(child.stdout().match(/"msg":"shutting down"/g)?.length, 1, child.stdout());
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the server process is gone');
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => probe.close(resolve));
  }

  it('SIGTERM to the npm process stops the server gracefully and frees the port', async (t) => {
    const port = await freePort();
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t) }, port, NPM_START);
    await child.healthy();
    const pid = await serverPid(child);
    assert.notEqual(pid, child.pid, 'npm runs the server as a child process');
    child.signal('SIGTERM');
    await assertStoppedGracefully(child, pid, port);
  });

  it('Ctrl-C, which signals npm and the server at once, still shuts down gracefully', async (t) => {
    const port = await freePort();
    const child = spawnServer(t, { DATABASE_URL: storeUrl(t) }, port, NPM_START);
    await child.healthy();
    const pid = await serverPid(child);
    // The server gets SIGINT from the terminal and again from npm, which forwards its own.
    child.signalGroup('SIGINT');
    await assertStoppedGracefully(child, pid, port);
  });
});
