import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildServices } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';

/**
 * `petstore account list | head -1`: the reader closes the pipe after what it wanted, and the CLI
 * ends quietly with exit status 0 — no stack, no "Unhandled 'error' event" — whether stdout or
 * stderr was closed. Real processes, since the pipe between them is what is under test.
 */

const ROOT = join(import.meta.dirname, '..', '..');
/** About 110 bytes a row and 150 as JSON: far beyond the 64 KiB a pipe holds, so it closes mid-write. */
const ACCOUNTS = 2000;

interface Ended {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  /** What the test read before closing its end, and everything of the other stream. */
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI and closes `closing` after its first chunk (stdout), or before the CLI writes anything (stderr). */
function runClosing(databaseUrl: string, closing: 'stdout' | 'stderr', args: string[]): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (closing === 'stdout') child.stdout.destroy();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (closing === 'stderr') child.stderr.destroy();
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('exit', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

describe('petstore CLI with a closed pipe', () => {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-cli-pipe-'));
  const databaseUrl = `sqlite:${join(directory, 'petstore.db')}`;

  before(async () => {
    const services = await buildServices(loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }));
    try {
      await services.store.migrate();
      // Long names make long rows; creations run side by side to share commits.
      const names = Array.from({ length: ACCOUNTS }, (_, index) => `account-${index}-${'x'.repeat(48)}`);
      await Promise.all(names.map((name) => services.accounts.createAccount(name, { plan: 'free' })));
    } finally {
      await services.close();
    }
  });
  after(() => rmSync(directory, { recursive: true, force: true }));

  it('ends quietly with exit status 0 when stdout closes in the middle of a long table or JSON', async () => {
    for (const args of [
      ['account', 'list'],
      ['account', 'list', '--json'],
    ]) {
      const ended = await runClosing(databaseUrl, 'stdout', args);
      const shown = `petstore ${args.join(' ')}: ${JSON.stringify({ ...ended, stdout: ended.stdout.length })}`;
      assert.deepEqual({ status: ended.status, signal: ended.signal }, { status: 0, signal: null }, shown);
      assert.equal(ended.stderr, '', `nothing on stderr: ${shown}`);
      assert.ok(ended.stdout.length > 0 && ended.stdout.length < ACCOUNTS * 100, `it was cut short: ${shown}`);
    }
  });

  it('ends quietly with exit status 0 when stderr is closed before a failure is printed', async () => {
    const ended = await runClosing(databaseUrl, 'stderr', ['account', 'show', '--name', 'nobody']);
    assert.deepEqual(ended, { status: 0, signal: null, stdout: '', stderr: '' });
  });
});
