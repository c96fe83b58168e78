import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * A child process that takes the SQLite file's write lock (BEGIN IMMEDIATE, and inserts a pet named
 * 'locker' under it), says so, holds it for `holdMs` and then commits: another process, as a backup,
 * a migration or a CLI command would be. Resolves once the lock is held.
 */
export async function holdWriteLock(path: string, holdMs: number): Promise<ChildProcess> {
  // The service may hold the lock for a moment (a flush, a creation): the child waits that out, as any
  // other process would, rather than fail at once with 'database is locked'.
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(${JSON.stringify(path)});
    db.exec('PRAGMA busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    db.exec("INSERT INTO pets (name, category_id, status, created_at) VALUES ('locker', 1, NULL, 0)");
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['--no-warnings', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A child that cannot take the lock exits without a word: the test fails then, naming why, instead of waiting.
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(
      `the lock holder exited (${String(code)}) without the lock: ${/Error: .*/.exec(stderr)?.[0] ?? stderr.trim()}`,
    );
  });
  const locked = once(child.stdout as NodeJS.ReadableStream, 'data') as Promise<[Buffer]>;
  const [chunk] = await Promise.race([locked, exited]);
  exited.catch(() => undefined);
  assert.equal(chunk.toString().trim(), 'locked');
  return child;
}

/** The longest gap between ticks of a 10 ms timer, i.e. the longest the event loop was blocked. */
export function watchEventLoop(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return longest;
    },
  };
}
