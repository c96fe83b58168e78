import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server started as a child process of the benchmark. */
export interface ChildServer {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /** Where its stdout goes. */
  readonly stdoutFile: string;
  /** The last lines it wrote to stderr, for error reports. */
  stderrTail(): string;
  /** Exit code, or undefined while it runs. */
  exitCode(): number | null | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildServerOptions {
  readonly name: string;
  /** Arguments to `process.execPath`: node flags, then the script. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly host: string;
  readonly port: number;
  /** Where its stdout goes (the access log of the service); a file path. */
  readonly stdoutFile: string;
  /** Runs it on these CPUs only (taskset syntax); taskset execs node, so the pid stays node's. */
  readonly cpus: string | undefined;
}

const STDERR_TAIL_BYTES = 16 * 1024;

/** Binds port 0 and releases it: a port that is free now, to hand to a child. */
export async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not obtain a free port');
  return address.port;
}

export function startChildServer(options: ChildServerOptions): ChildServer {
  const stdout = openSync(options.stdoutFile, 'a');
  let child: ChildProcess;
  try {
    const [command, args] =
      options.cpus === undefined
        ? [process.execPath, [...options.args]]
        : ['taskset', ['-c', options.cpus, process.execPath, ...options.args]];
    child = spawn(command, args, { env: options.env, stdio: ['ignore', stdout, 'pipe'] });
  } finally {
    closeSync(stdout);
  }
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  let code: number | null | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (exitCode, signal) => {
      code = exitCode ?? (signal === null ? null : -1);
      resolve();
    });
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${process.execPath}`);
  const pid = child.pid;
  return {
    name: options.name,
    pid,
    url: `http://${options.host}:${options.port}`,
    stdoutFile: options.stdoutFile,
    stderrTail: () => tail,
    exitCode: () => code,
    async stop(graceMs = 15_000) {
      if (code !== undefined) return;
      child.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
      if (killed) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Confines every thread of a running process (this one by default) to `cpus` (taskset syntax). */
export function pinProcess(cpus: string, pid = process.pid): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** Polls `path` until it answers 2xx; fails early when the child exits. */
export async function waitUntilReady(server: ChildServer, path: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    const code = server.exitCode();
    if (code !== undefined) {
      throw new Error(`${server.name} exited with code ${String(code)} before it was ready:\n${server.stderrTail()}`);
    }
    try {
      const response = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) return;
      lastProblem = `status ${response.status}`;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    await sleep(100);
  }
  throw new Error(`${server.name} was not ready within ${timeoutMs} ms (${lastProblem}):\n${server.stderrTail()}`);
}

/** CPU seconds (user + system) a process has used so far; undefined where /proc is missing. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    // /proc reports clock ticks of USER_HZ, which is 100 on Linux.
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / 100 : undefined;
  } catch {
    return undefined;
  }
}

/** Machine-wide CPU seconds from /proc/stat: user + nice + system, and steal; undefined without /proc. */
export function machineCpuSeconds(): { busy: number; steal: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , , , steal = 0] = ticks;
    return { busy: (user + nice + system) / 100, steal: steal / 100 };
  } catch {
    return undefined;
  }
}
