import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

export const HOST = '127.0.0.1';

/** A server started as a child process. */
export interface ChildServer {
  readonly url: string;
  stop(): Promise<void>;
}

/** The caller's PATH and HOME only, so a stray PORT or DATABASE_URL in its shell cannot reach a server. */
export function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR } = process.env;
  return { PATH, HOME, ...(TMPDIR === undefined ? {} : { TMPDIR }), ...extra };
}

/** A port that is free now, to hand to a child. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** The node arguments of a `node <entry>` script in a checkout's package.json: its own entry, whatever version. */
export function scriptArgs(checkout: string, script: string): string[] {
  const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const [command, ...args] = (manifest.scripts?.[script] ?? '').trim().split(/\s+/);
  if (command !== 'node' || args.length === 0) throw new Error(`${checkout}: script '${script}' is not 'node <entry>'`);
  return args;
}

/** Runs the checkout's operator CLI; returns its stdout. */
export async function runCli(checkout: string, env: NodeJS.ProcessEnv, args: readonly string[]): Promise<string> {
  const cli = [...scriptArgs(checkout, 'petstore'), ...args];
  const { stdout } = await promisify(execFile)(process.execPath, cli, { cwd: checkout, env, encoding: 'utf8' });
  return stdout;
}

/** Starts `node <args>` in `cwd` on a fresh port, stdout discarded, and waits until GET /healthz answers 2xx. */
export async function startServer(
  name: string,
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...env, PORT: String(port), HOST },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ChildServer = {
    url: `http://${HOST}:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      if ((await Promise.race([exited.then(() => true), sleep(10_000, false)])) === false) child.kill('SIGKILL');
      await exited;
    },
  };
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${stderr}`);
    const ok = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      async (response) => (await response.arrayBuffer(), response.ok),
      () => false,
    );
    if (ok) return server;
    await sleep(100);
  }
  await server.stop();
  throw new Error(`${name} was not ready within 30 s:\n${stderr}`);
}
