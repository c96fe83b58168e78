import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { join } from 'node:path';

/** What the soak's scenarios share: the server as `npm start` runs it, as a child process, and its requests. */
const ROOT = join(import.meta.dirname, '..');

export function log(message: string): void {
  process.stderr.write(`soak: ${message}\n`);
}

export function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return value;
}

/** What `npm start` runs after `node`, V8 settings included, so the soak measures the shipped process. */
function startArguments(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/);
  // `exec node …`: the shell npm runs the script in gives way to node, so that signals reach it.
  const [command, ...args] = words[0] === 'exec' ? words.slice(1) : words;
  if (command !== 'node') throw new Error(`the start script is not 'node …': ${scripts.start}`);
  return args;
}

function nodeOptions(): string {
  return process.env.SOAK_NODE_OPTIONS ?? '';
}

export async function startChild(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; metricsUrl: string }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const metricsPort = port + 1;
  const child = spawn(process.execPath, startArguments(), {
    cwd: ROOT,
    // SOAK_NODE_OPTIONS adds V8 settings to try (e.g. --max-semi-space-size); none by default.
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      NODE_OPTIONS: nodeOptions(),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { child, url, metricsUrl: `http://127.0.0.1:${metricsPort}` };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start (exit ${String(child.exitCode)}): ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Ends a child of startChild gracefully (SIGTERM, as a supervisor would) and resolves once it has exited. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The status of one request (-1: no answer); a body makes it a POST of that JSON. */
export function send(
  agent: Agent,
  url: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<number> {
  return new Promise((resolve) => {
    const method = body === undefined ? 'GET' : 'POST';
    const json = body === undefined ? undefined : JSON.stringify(body);
    const sent = json === undefined ? headers : { ...headers, 'content-type': 'application/json' };
    const outgoing = request(`${url}${path}`, { agent, headers: sent, method }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve(-1));
    });
    outgoing.on('error', () => resolve(-1));
    outgoing.end(json);
  });
}
