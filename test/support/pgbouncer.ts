import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Client } from 'pg';
import { POSTGRES_TEST_URL } from './backends.ts';
import { freePort } from './server-process.ts';

/**
 * PgBouncer in transaction mode in front of the test PostgreSQL (PETSTORE_TEST_POSTGRES_URL), the
 * way operators run it: Debian's `pgbouncer` with its default settings but for those below.
 *
 *   const bouncer = await pgBouncer();
 *   describe('…', { skip: bouncer.skip }, () => { … bouncer.url … });
 *   after(() => bouncer.stop());
 *
 * `pgBouncer()` reuses the PgBouncer named by PETSTORE_TEST_PGBOUNCER_URL when that is set (a
 * global setup starts one with `startPgBouncer()` and stops it with `stopPgBouncer()`), and
 * otherwise starts one of its own, which `stop()` ends. Any database name is routed through to
 * the server (`* = host=… port=…`). When the binary is missing or PostgreSQL is unreachable, the
 * suites are skipped with the reason, unless CI=true: then `pgBouncer()` rejects, which fails the
 * test file instead.
 */
export interface PgBouncerBackend {
  /** PgBouncer's URL for the database of PETSTORE_TEST_POSTGRES_URL ('' when skipped). */
  readonly url: string;
  /** Why PgBouncer cannot run here; pass it as node:test's `skip` option. */
  readonly skip?: string;
  /** Stops the PgBouncer this backend started; a shared one is left running. Safe to call twice. */
  stop(): Promise<void>;
}

/** A PgBouncer child process of this test process. */
export interface RunningPgBouncer {
  /** PgBouncer's URL for the database of PETSTORE_TEST_POSTGRES_URL. */
  readonly url: string;
  readonly port: number;
  /** What it logged so far (it logs to stderr). */
  log(): string;
  /** How it ended, if it has: its exit code or signal. */
  exitStatus(): string | undefined;
  /** Stops it and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** The URL a global setup puts here is reused by every `pgBouncer()` of the run. */
export const PGBOUNCER_URL_VARIABLE = 'PETSTORE_TEST_PGBOUNCER_URL';

const START_TIMEOUT_MS = 10_000;

export async function pgBouncer(): Promise<PgBouncerBackend> {
  const shared = process.env[PGBOUNCER_URL_VARIABLE];
  if (shared) return { url: shared, stop: async () => undefined };
  const unavailable = whyUnavailable(await postgresProblem());
  if (unavailable) return unavailable;
  const running = await startPgBouncer();
  return { url: running.url, stop: () => running.stop() };
}

/**
 * Why a suite that starts PgBouncers of its own (`startPgBouncer(options)`) cannot run here, as
 * node:test's `skip` option; rejects instead with CI=true, as `pgBouncer()` does.
 */
export async function pgBouncerSkip(): Promise<string | undefined> {
  return whyUnavailable(await postgresProblem())?.skip;
}

/** The same URL with another database: PgBouncer routes any name to the server's database of that name. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export interface PgBouncerOptions {
  /** The port it listens on (a restart in place); a free one unless told. */
  readonly port?: number;
  /** The port on 127.0.0.1 it forwards to instead of the test PostgreSQL's (a proxy in front of it). */
  readonly upstreamPort?: number;
  /** Settings beyond the defaults below, e.g. `{ server_connect_timeout: '5' }`. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** Starts PgBouncer on a free port of 127.0.0.1; resolves once it passes a query through. */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<RunningPgBouncer> {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error(missingBinary());
  // The port is free when probed, not necessarily when PgBouncer binds it: try again with another.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOn(binary, options.port ?? (await freePort()), options);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !(error instanceof PortTakenError)) throw error;
    }
  }
}

export async function stopPgBouncer(running: RunningPgBouncer): Promise<void> {
  await running.stop();
}

class PortTakenError extends Error {}

async function startOn(binary: string, port: number, options: PgBouncerOptions): Promise<RunningPgBouncer> {
  const upstream = new URL(POSTGRES_TEST_URL);
  const user = decodeURIComponent(upstream.username) || 'postgres';
  if (options.upstreamPort !== undefined) {
    upstream.hostname = '127.0.0.1';
    upstream.port = String(options.upstreamPort);
  }
  const directory = writeConfiguration(upstream, user, port, options.settings ?? {});
  const child = spawn(binary, [...dropPrivileges(), join(directory, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    })();
    return stopping;
  };
  const url = new URL(POSTGRES_TEST_URL);
  url.host = `127.0.0.1:${port}`;
  try {
    await waitUntilServing(url.toString(), child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  const exitStatus = (): string | undefined =>
    child.exitCode !== null || child.signalCode !== null ? String(child.exitCode ?? child.signalCode) : undefined;
  return { url: url.toString(), port, log: () => log, exitStatus, stop };
}

/**
 * Transaction mode, trust authentication, room for the tests' clients and the caller's `settings`;
 * every other setting is PgBouncer's default. The directory is readable by the user PgBouncer switches to.
 */
function writeConfiguration(
  upstream: URL,
  user: string,
  port: number,
  settings: Readonly<Record<string, string>>,
): string {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-pgbouncer-'));
  chmodSync(directory, 0o755);
  const authFile = join(directory, 'userlist.txt');
  writeFileSync(authFile, `"${user}" ""\n`, { mode: 0o644 });
  const ini = [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || '5432'}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    // No Unix socket: parallel PgBouncers would contend for one in /tmp.
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${authFile}`,
    'pool_mode = transaction',
    'max_client_conn = 500',
    'default_pool_size = 20',
    ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
    '',
  ].join('\n');
  writeFileSync(join(directory, 'pgbouncer.ini'), ini, { mode: 0o644 });
  return directory;
}

/** PgBouncer refuses to run as root: it is told which user to become instead. */
function dropPrivileges(): string[] {
  if (process.getuid?.() !== 0) return [];
  const users = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':')[0]);
  return ['-u', users.includes('postgres') ? 'postgres' : 'nobody'];
}

async function waitUntilServing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const output = log();
      const message = `pgbouncer exited (${String(child.exitCode ?? child.signalCode)}): ${output.slice(-500)}`;
      throw /address already in use/i.test(output) ? new PortTakenError(message) : new Error(message);
    }
    try {
      await passesQuery(url);
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new Error(`pgbouncer did not serve within ${START_TIMEOUT_MS} ms (${reason}): ${log().slice(-500)}`);
}

async function passesQuery(url: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Where `pgbouncer` is: on PATH, or in the sbin directories Debian installs it to. */
function pgBouncerBinary(): string | undefined {
  const directories = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const directory of directories.filter(Boolean)) {
    const candidate = join(directory, 'pgbouncer');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function missingBinary(): string {
  return 'pgbouncer is not installed (apt-get install -y pgbouncer)';
}

/** Why PostgreSQL cannot be used, if it cannot. */
async function postgresProblem(): Promise<string | undefined> {
  if (!pgBouncerBinary()) return missingBinary();
  try {
    await passesQuery(POSTGRES_TEST_URL);
    return undefined;
  } catch (error) {
    const shown = POSTGRES_TEST_URL.replace(/\/\/[^@/]*@/, '//…@');
    const reason = error instanceof Error ? error.message || error.name : String(error);
    return `PostgreSQL at ${shown} is unreachable (${reason})`;
  }
}

function whyUnavailable(problem: string | undefined): PgBouncerBackend | undefined {
  if (problem === undefined) return undefined;
  if (process.env.CI === 'true') {
    throw new Error(`${problem}; CI=true, so the PgBouncer suites fail instead of being skipped`);
  }
  return {
    url: '',
    skip: `${problem}; the PgBouncer suites need both (with CI=true this fails instead)`,
    stop: async () => undefined,
  };
}
