import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import {
  assertFails,
  assertKeyShape,
  assertOk,
  jsonOf,
  KEY,
  shown,
  type CreatedKeyJson,
  type KeyJson,
} from './cli-assertions.ts';
import { runCliInProcess, type CliResult } from './cli-runner.ts';

/**
 * The operator CLI over a SQLite store of a test's own, configured by the environment alone, as an
 * operator configures it: commands run through the CLI's own entry function in this process
 * (cli-runner.ts), with the exact stdout and stderr a process would print and its exit status.
 */

/** A fresh store in its own temporary directory, and the CLI (in this process) pointed at it. */
export interface Sandbox {
  readonly databaseUrl: string;
  readonly databasePath: string;
  cli(...args: string[]): Promise<CliResult>;
  /** The CLI with extra environment variables (they override DATABASE_URL too). */
  cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult>;
  /**
   * Several commands, one after the other. Commands on one store are never run side by side
   * without a server holding it open: concurrent opens of the SQLite file can fail.
   */
  each(...commands: string[][]): Promise<CliResult[]>;
  remove(): void;
}

export function createSandbox(): Sandbox {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-cli-'));
  const databasePath = join(directory, 'db');
  const databaseUrl = `sqlite:${databasePath}`;
  return {
    databaseUrl,
    databasePath,
    cli: (...args) => runCliInProcess(args, { DATABASE_URL: databaseUrl }),
    cliWith: (env, ...args) => runCliInProcess(args, { DATABASE_URL: databaseUrl, ...env }),
    async each(...commands) {
      const results: CliResult[] = [];
      for (const args of commands) results.push(await runCliInProcess(args, { DATABASE_URL: databaseUrl }));
      return results;
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** A sandbox removed when the test ends. */
export function sandbox(t: TestContext): Sandbox {
  const created = createSandbox();
  t.after(() => created.remove());
  return created;
}

/** Creates an account on `plan` and a key for it; returns the key and its id. */
export async function accountWithKey(
  box: Sandbox,
  name: string,
  planArgs: string[] = ['--plan', 'free'],
): Promise<{ key: string; id: string }> {
  assertOk(await box.cli('account', 'create', '--name', name, ...planArgs));
  const created = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', name, '--json'));
  assert.match(created.key, KEY);
  return { key: created.key, id: created.id };
}

/** A GET /v1/pets to a server: the app in this process, or a server process. */
export async function getPets(
  server: { readonly url: string },
  key: string,
): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

export async function keysOf(box: Sandbox, account: string): Promise<KeyJson[]> {
  const keys = jsonOf<KeyJson[]>(await box.cli('key', 'list', '--account', account, '--json'));
  assert.ok(Array.isArray(keys));
  for (const key of keys) assertKeyShape(key);
  return keys;
}

export async function keyOf(box: Sandbox, account: string, id: string): Promise<KeyJson> {
  const key = (await keysOf(box, account)).find((candidate) => candidate.id === id);
  assert.ok(key, `key ${id} is listed for ${account}`);
  return key;
}

/** A command line the CLI refuses: what its one line mentions, and with --json the error's code. */
export type Refusal = [args: string[], mention: RegExp, code?: string];

/** Runs every refused command line side by side (none opens the store): each exits 2 with its one line. */
export async function assertRefusals(box: Sandbox, refusals: readonly Refusal[]): Promise<void> {
  const results = await Promise.all(refusals.map(([args]) => box.cli(...args)));
  results.forEach((result, index) => {
    const [, mention, code] = refusals[index] as Refusal;
    const reported = assertFails(result, 2, mention);
    if (code !== undefined) assert.equal(reported, code, shown(result));
  });
}
