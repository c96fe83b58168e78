import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from './http-client.ts';

/** The real server (src/server.ts) as a child process on its own port: what an operator runs. */
export interface ServerProcess {
  readonly url: string;
  readonly port: number;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Sends a signal and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const ROOT = join(import.meta.dirname, '..', '..');

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no ephemeral port');
  return address.port;
}

export async function startServerProcess(
  env: Record<string, string>,
  options: { port?: number; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'src', 'server.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DEMO_BOOTSTRAP: 'false',
      // Any free port: servers of concurrent tests must not contend for the default 9464.
      METRICS_PORT: '0',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A start takes about 2 s alone, but the CLI suite starts servers while its other groups spawn
  // command after command on the same two cores: there one took longer than 15 s.
  const deadline = Date.now() + (options.timeoutMs ?? 45_000);
  const url = `http://127.0.0.1:${port}`;
  while (!(await answers(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `server did not start (exit ${String(child.exitCode)}): ${stderr.slice(-500)} ${stdout.slice(-500)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url,
    port,
    output: () => stdout,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Whether /healthz answers 200; false while nothing listens yet. */
async function answers(url: string): Promise<boolean> {
  try {
    return (await request({ url }, '/healthz')).status === 200;
  } catch {
    return false;
  }
}
