import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BareResponses } from './bare-server.ts';

const HOST = '127.0.0.1';
/** Effectively unlimited, so that rate limiting never throttles the benchmark. */
const LIMIT = 1_000_000_000;
const STATUSES = ['available', 'pending', 'sold'];

/** A server started as a child process, its stdout discarded. */
export interface ChildServer {
  readonly url: string;
  /** Its peak resident set since it started or since the last `resetPeakRss`, in bytes; undefined where unknown. */
  peakRssBytes(): number | undefined;
  /** Starts its peak anew from its resident set now (Linux 4.0 and later; elsewhere it does nothing). */
  resetPeakRss(): void;
  /** CPU time it has used since it started, all its threads, user and system, in seconds; undefined where unknown. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** VmHWM of /proc/<pid>/status: the most resident memory the process has held. */
function readPeakRss(pid: number | undefined): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on every Linux architecture Node runs on. */
const USER_HZ = 100;

/** utime + stime of /proc/<pid>/stat (fields 14 and 15, after the parenthesised command name). */
function readCpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** Writing 5 to /proc/<pid>/clear_refs sets VmHWM back to the current VmRSS. */
function resetPeakRss(pid: number | undefined): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // No procfs, or a kernel without it: the peak then counts from the start.
  }
}

/** Only PATH and HOME of the caller's environment, so that a stray PORT or DATABASE_URL cannot reach a server. */
function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'], HOME: process.env['HOME'], ...extra };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, HOST);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The node arguments of a checkout's `node <entry>` script: each version starts its own way. */
function scriptArgs(checkout: string, script: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts?: object };
  const words = String((scripts as Record<string, unknown> | undefined)?.[script]).split(/\s+/);
  // `exec node …`: the shell npm runs the script in gives way to node, so that signals reach it.
  const [command, ...args] = words[0] === 'exec' ? words.slice(1) : words;
  if (command !== 'node' || args.length === 0) throw new Error(`${checkout}: script '${script}' is not 'node <entry>'`);
  return args;
}

/** Starts `node <args>` in `cwd` on a free port and waits until it answers HTTP. */
async function startServer(name: string, cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...env, PORT: `${port}`, HOST },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited.then(() => true), sleep(10_000, false)])) === false) child.kill('SIGKILL');
    await exited;
  };
  const url = `http://${HOST}:${port}`;
  for (let attempt = 0; attempt < 300 && child.exitCode === null; attempt += 1) {
    const answer = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
    if (
      await answer?.arrayBuffer().then(
        () => true,
        () => false,
      )
    )
      return {
        url,
        stop,
        peakRssBytes: () => readPeakRss(child.pid),
        resetPeakRss: () => resetPeakRss(child.pid),
        cpuSeconds: () => readCpuSeconds(child.pid),
      };
    await sleep(100);
  }
  await stop();
  throw new Error(`${name} did not start:\n${stderr}`);
}

export function startBare(responses: BareResponses): Promise<ChildServer> {
  const env = cleanEnv({ BARE_RESPONSES: JSON.stringify(responses) });
  return startServer('bare server', import.meta.dirname, [join(import.meta.dirname, 'bare-server.ts')], env);
}

/** Fastify's hello world: the bare server's canned answers, sent by a Fastify app with a route per request shape. */
export function startFastifyHello(responses: BareResponses): Promise<ChildServer> {
  const env = cleanEnv({ BARE_RESPONSES: JSON.stringify(responses) });
  const entry = join(import.meta.dirname, 'fastify-hello-server.ts');
  return startServer('Fastify hello world', import.meta.dirname, [entry], env);
}

/**
 * The Express app (express-server.ts) on a fresh SQLite file at `databaseFile`, with one API key of
 * its own, which it keeps hashed; seed its pets with `seedPets` like the service's.
 */
export async function startExpress(databaseFile: string) {
  const key = `bench_${randomBytes(24).toString('base64url')}`;
  const env = cleanEnv({ DATABASE_FILE: databaseFile, API_KEY: key });
  const entry = join(import.meta.dirname, 'express-server.ts');
  return { key, server: await startServer('Express app', import.meta.dirname, [entry], env) };
}

/**
 * The app a developer would write on Fastify with its own plugins (fastify-typical-server.ts), on a
 * fresh SQLite file, with one key of its own; `log` turns on Fastify's request log. Seed it with
 * `seedPets` like the others.
 */
export async function startFastifyTypical(databaseFile: string, log: boolean) {
  const key = `bench_${randomBytes(24).toString('base64url')}`;
  const env = cleanEnv({ DATABASE_FILE: databaseFile, API_KEY: key, LOG: log ? 'on' : 'off' });
  const entry = join(import.meta.dirname, 'fastify-typical-server.ts');
  const name = log ? 'Fastify-typical app with its log' : 'Fastify-typical app';
  return { key, server: await startServer(name, import.meta.dirname, [entry], env) };
}

/**
 * Sets a checkout's service up through its public surfaces only (its operator CLI, its `start`
 * script's entry, HTTP), so that any version of it is measured the same way. `name` names it in reports.
 */
export async function startService(
  name: string,
  checkout: string,
  databaseUrl: string,
  redisUrl?: string,
  redisPrefix?: string,
) {
  // Its CLI first, before the server: migrations, then the account and the key.
  const redis = {
    ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
    ...(redisPrefix === undefined ? {} : { REDIS_PREFIX: redisPrefix }),
  };
  const base = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', DEMO_BOOTSTRAP: 'false', METRICS_PORT: '0' };
  const env = cleanEnv({ ...base, ...redis });
  const cli = (command: string): string =>
    execFileSync(process.execPath, [...scriptArgs(checkout, 'petstore'), ...command.split(' ')], {
      cwd: checkout,
      env: { ...env, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
  cli('migrate');
  cli(`account create --name bench --plan enterprise --per-minute ${LIMIT} --per-day ${LIMIT}`);
  const key = cli('key create --account bench').trim().split('\n').at(-1) ?? '';
  return { key, server: await startServer(name, checkout, scriptArgs(checkout, 'start'), env) };
}

/** Creates `count` pets over HTTP, 16 at a time; returns their ids in ascending order. */
export async function seedPets(url: string, key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const createPets = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const pet = { name: `Pet ${index + 1}`, categoryId: index % 100, status: STATUSES[index % STATUSES.length] };
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const response = await fetch(`${url}/v1/pets`, { method: 'POST', headers, body: JSON.stringify(pet) });
      const body = await response.text();
      if (response.status !== 201) throw new Error(`seeding: POST /v1/pets answered ${response.status}: ${body}`);
      ids.push(String((JSON.parse(body) as { id: unknown }).id));
    }
  };
  await Promise.all(Array.from({ length: 16 }, createPets));
  // Ids are non-negative integers, possibly beyond 2^53: shorter is smaller, then digit by digit.
  return ids.sort((a, b) => a.length - b.length || a.localeCompare(b));
}
