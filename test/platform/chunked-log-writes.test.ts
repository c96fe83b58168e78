import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { logDestination } from '../../src/log-destination.ts';
import { ChunkedLogDestination } from '../../src/platform/chunked-log-writes.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const MODULE = pathToFileURL(join(ROOT, 'src', 'platform', 'chunked-log-writes.ts')).href;
const SERVER = pathToFileURL(join(ROOT, 'src', 'server.ts')).href;

/** A file descriptor of a fresh file, and a way to read back what reached the file. */
function logFile(t: TestContext): { fd: number; written: () => string } {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-log-'));
  const path = join(directory, 'log');
  const fd = openSync(path, 'w');
  t.after(() => {
    closeSync(fd);
    rmSync(directory, { recursive: true, force: true });
  });
  return { fd, written: () => readFileSync(path, 'utf8') };
}

function fileDestination(t: TestContext): { destination: ChunkedLogDestination; written: () => string } {
  const { fd, written } = logFile(t);
  return { destination: new ChunkedLogDestination(fd), written };
}

const flushed = (destination: ChunkedLogDestination): Promise<void> =>
  new Promise((resolve, reject) => destination.flush((error) => (error ? reject(error) : resolve())));

describe('buffered log writes (ChunkedLogDestination)', () => {
  it('keeps lines in memory until flushed, then writes all of them in order', async (t) => {
    const { destination, written } = fileDestination(t);
    const lines = Array.from({ length: 100 }, (_, index) => `{"n":${index},"name":"🐕 Rex ${index}"}\n`);
    for (const line of lines) destination.write(line);
    assert.equal(written(), '', 'nothing is written per line');
    await flushed(destination);
    assert.equal(written(), lines.join(''));
  });

  it('writes full chunks as it goes, and a line longer than a chunk whole, without reordering', async (t) => {
    const { destination, written } = fileDestination(t);
    const lines: string[] = [];
    for (let index = 0; index < 2000; index += 1) lines.push(`{"n":${index},"pad":"${'é'.repeat(100)}"}\n`);
    lines.splice(1000, 0, `{"huge":"${'x'.repeat(100_000)}"}\n`);
    for (const line of lines) destination.write(line);
    await flushed(destination);
    assert.equal(written(), lines.join(''));
  });

  it('calls back at once when there is nothing to write', async (t) => {
    const { destination, written } = fileDestination(t);
    await flushed(destination);
    assert.equal(written(), '');
  });

  it('is the destination of file descriptors once loaded', (t) => {
    const { fd } = logFile(t);
    assert.ok(logDestination(fd) instanceof ChunkedLogDestination);
  });
});

/**
 * Runs the server's own entry (main) in a process, with this file loaded as src/server.ts loads
 * it, or replaced by an empty module as if its import were deleted; reports how often it was loaded.
 */
const serverScript = (replace: boolean): string => `
import { registerHooks } from 'node:module';
let loaded = 0;
registerHooks({
  load(url, context, nextLoad) {
    if (url !== ${JSON.stringify(MODULE)}) return nextLoad(url, context);
    loaded += 1;
    if (!${String(replace)}) return nextLoad(url, context);
    return { format: 'module', source: 'export {};', shortCircuit: true };
  },
});
process.on('exit', () => process.stderr.write(JSON.stringify({ loaded }) + '\\n'));
const { main } = await import(${JSON.stringify(SERVER)});
await main();
`;

interface ServerRun {
  readonly lines: Record<string, unknown>[];
  readonly output: string;
  readonly exitCode: number | null;
  readonly loaded: number;
}

const REQUESTS = 300;
/** Makes every access-log line about 500 bytes: the requests fill more than two 64 KiB chunks. */
const PAD = 'x'.repeat(400);

/** Starts the server, sends REQUESTS requests, stops it with SIGTERM at once, and reads its log. */
async function runServer(t: TestContext, replace: boolean): Promise<ServerRun> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-platform-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: 'off',
    LOG_LEVEL: 'info',
    DEMO_BOOTSTRAP: 'false',
  };
  const flags = ['--conditions=@petstore/source', '--input-type=module', '--eval', serverScript(replace)];
  const child = spawn(process.execPath, flags, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let output = '';
  let errors = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await listeningUrl(() => output, 10_000);
  for (let index = 0; index < REQUESTS; index += 1) {
    const response = await fetch(`${url}/healthz?n=${index}&pad=${PAD}`);
    await response.arrayBuffer();
  }
  child.kill('SIGTERM');
  const exitCode = await exited;
  const report = errors.trim().split('\n').at(-1) ?? '{}';
  const { loaded } = JSON.parse(report) as { loaded: number };
  const lines = output
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, output, exitCode, loaded };
}

/** The public URL, from the log line that announces it (which may wait up to a second in the buffer). */
async function listeningUrl(output: () => string, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = /Server listening at (http:\/\/[^"\s]+)/.exec(output());
    if (found?.[1] !== undefined) return found[1];
    if (Date.now() > deadline) throw new Error(`the server did not announce its URL; it wrote: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function assertCompleteLog(run: ServerRun): void {
  assert.equal(run.exitCode, 0);
  assert.ok(run.output.endsWith('\n'), 'the log ends with a whole line');
  const requested = run.lines
    .filter((line) => line['msg'] === 'request')
    .map((line) => Number(/[?&]n=(\d+)/.exec(String(line['url']))?.[1]));
  assert.deepEqual(
    requested,
    Array.from({ length: REQUESTS }, (_, index) => index),
    'every access-log line, in order, flushed before the process exited',
  );
  const messages = run.lines.map((line) => line['msg']);
  assert.ok(messages.indexOf('shutting down') > messages.lastIndexOf('request'), 'the shutdown line is there, last');
}

describe("the server's log, with and without this file", () => {
  it('writes every line whole and flushes them on exit with it', async (t) => {
    const run = await runServer(t, false);
    assert.equal(run.loaded, 1);
    assertCompleteLog(run);
  });

  it('writes every line whole and flushes them on exit without it, through the ordinary destination', async (t) => {
    const run = await runServer(t, true);
    assert.equal(run.loaded, 1, 'replaced by an empty module');
    assertCompleteLog(run);
  });
});
