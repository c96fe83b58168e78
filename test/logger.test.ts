import assert from 'node:assert/strict';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { createLogger } from '../src/composition-root.ts';

/**
 * The process logger: lines are buffered for fewer writes, yet a quiet server's lines still reach
 * the output within about a second, in order, and the Authorization header never does.
 */
function logFile(t: TestContext): { path: string; fd: number } {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-log-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const path = join(directory, 'out.log');
  return { path, fd: openSync(path, 'a') };
}

async function linesWithin(path: string, count: number, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('process logger', () => {
  it('writes a lone line within about a second, without an explicit flush', async (t) => {
    const { path, fd } = logFile(t);
    const logger = createLogger('info', fd);
    logger.info('quiet');
    assert.equal(readFileSync(path, 'utf8'), '', 'a short line is buffered at first');
    const lines = await linesWithin(path, 1, 2500);
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0] ?? '{}') as { msg: string }).msg, 'quiet');
  });

  it('keeps the order of the lines of a logger and of its per-request children', async (t) => {
    const { path, fd } = logFile(t);
    const logger = createLogger('info', fd);
    for (let index = 0; index < 500; index += 1) {
      (index % 2 === 0 ? logger : logger.child({ reqId: `req-${index}` })).info({ index }, 'line');
    }
    await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
    const indexes = (await linesWithin(path, 500, 2500)).map((line) => (JSON.parse(line) as { index: number }).index);
    assert.deepEqual(
      indexes,
      Array.from({ length: 500 }, (_, index) => index),
    );
  });

  it('redacts the Authorization header wherever it is logged', async (t) => {
    const { path, fd } = logFile(t);
    const logger = createLogger('info', fd);
    logger.info({ req: { headers: { authorization: 'Bearer pst_secret' } }, headers: { authorization: 'x' } }, 'r');
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    const [line] = await linesWithin(path, 1, 2500);
    assert.ok(line !== undefined);
    assert.doesNotMatch(line, /pst_secret/);
    assert.deepEqual((JSON.parse(line) as { req: unknown }).req, { headers: { authorization: '[redacted]' } });
  });
});
