import assert from 'node:assert/strict';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { pino } from 'pino';
import { asyncFileStream, LogDestination, type LineStream } from '../src/log-destination.ts';

/**
 * The buffered log destination (README, "Operations": logs): lines reach the file in order, in
 * chunks rather than one write per line, and nothing is lost on flush.
 */

function logFile(t: TestContext): { path: string; stream: LineStream } {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-log-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const path = join(directory, 'out.log');
  return { path, stream: asyncFileStream(openSync(path, 'a')) };
}

function flushed(destination: LogDestination): Promise<void> {
  return new Promise((resolve, reject) => destination.flush((error) => (error ? reject(error) : resolve())));
}

describe('LogDestination', () => {
  it('keeps lines in memory until the next one might not fit, then hands the chunk over whole', () => {
    const chunks: string[] = [];
    const destination = new LogDestination(
      { write: (chunk) => chunks.push(chunk.toString()), flush: (callback) => callback?.() },
      { chunkBytes: 300, maxDelayMs: 60_000 },
    );
    const line = `${'x'.repeat(39)}\n`;
    for (let i = 0; i < 5; i += 1) destination.write(line);
    assert.deepEqual(chunks, [], '200 bytes, and room for a 40-character line of up to 120 bytes');
    destination.write(line);
    assert.deepEqual(chunks, [line.repeat(5)]);
    destination.write('tail\n');
    destination.flush();
    assert.deepEqual(chunks, [line.repeat(5), `${line}tail\n`]);
  });

  it('passes a line longer than a chunk on by itself, after what was pending', () => {
    const chunks: string[] = [];
    const destination = new LogDestination(
      { write: (chunk) => chunks.push(chunk.toString()), flush: (callback) => callback?.() },
      { chunkBytes: 300, maxDelayMs: 60_000 },
    );
    const long = `${'y'.repeat(500)}\n`;
    destination.write('first\n');
    destination.write(long);
    destination.write('after\n');
    destination.flush();
    assert.deepEqual(chunks, ['first\n', long, 'after\n']);
  });

  it('writes pending lines after at most the delay, without a flush', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const chunks: string[] = [];
    const destination = new LogDestination(
      { write: (chunk) => chunks.push(chunk.toString()), flush: (callback) => callback?.() },
      { maxDelayMs: 1000 },
    );
    destination.write('a\n');
    t.mock.timers.tick(999);
    assert.deepEqual(chunks, []);
    t.mock.timers.tick(1);
    assert.deepEqual(chunks, ['a\n']);
  });

  it('gets the lines of a logger and of its per-request children into the file in order', async (t) => {
    const { path, stream } = logFile(t);
    const destination = new LogDestination(stream);
    const logger = pino({ base: undefined }, destination);
    for (let i = 0; i < 2000; i += 1) {
      const url = `/v1/pets/${i}?name=caf\u00e9-\u{1f408}`;
      logger.child({ reqId: `req-${i}` }).info({ method: 'GET', url, status: 200, ms: 0.1, key: 'key_1' }, 'request');
      if (i % 500 === 0) logger.warn({ i }, 'marker');
    }
    await flushed(destination);
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; reqId?: string; i?: number; url?: string });
    assert.equal(lines[0]?.url, '/v1/pets/0?name=caf\u00e9-\u{1f408}', 'non-ASCII text is written as UTF-8, whole');
    assert.equal(lines.length, 2004);
    const order = lines.map((line) => (line.msg === 'marker' ? `marker-${line.i}` : line.reqId));
    const expected: string[] = [];
    for (let i = 0; i < 2000; i += 1) {
      expected.push(`req-${i}`);
      if (i % 500 === 0) expected.push(`marker-${i}`);
    }
    assert.deepEqual(order, expected);
  });
});
