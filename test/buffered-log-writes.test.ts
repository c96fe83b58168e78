import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { LogDestination } from '../src/log-destination.ts';

/** A destination over a fresh file, and a way to read back what reached the file. */
function fileDestination(t: TestContext): { destination: LogDestination; written: () => string } {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-log-'));
  const path = join(directory, 'log');
  const fd = openSync(path, 'w');
  t.after(() => {
    closeSync(fd);
    rmSync(directory, { recursive: true, force: true });
  });
  return { destination: new LogDestination(fd), written: () => readFileSync(path, 'utf8') };
}

const flushed = (destination: LogDestination): Promise<void> =>
  new Promise((resolve, reject) => destination.flush((error) => (error ? reject(error) : resolve())));

describe('buffered log writes (LogDestination)', () => {
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
});
