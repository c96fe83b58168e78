import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { createLogger } from '../src/composition-root.ts';
import { HTTP_ERROR_CODES, StorageUnavailableError } from '../src/errors.ts';
import { createErrorHandler } from '../src/http/error-handler.ts';
import { LogThrottle } from '../src/log-throttle.ts';

/** One line per interval for a repeating failure, with the count of occurrences kept quiet. */
describe('a repeating failure: one log line per interval (LogThrottle)', () => {
  it('admits the first occurrence, then one per interval with the count suppressed since', () => {
    let now = 5_000;
    const throttle = new LogThrottle({ intervalMs: 10_000, now: () => now });
    assert.deepEqual(throttle.take(), { suppressed: 0 });
    for (let i = 0; i < 49; i += 1) {
      now += 100;
      assert.equal(throttle.take(), undefined);
    }
    now = 5_000 + 9_999;
    assert.equal(throttle.take(), undefined, 'still within the interval');
    now = 5_000 + 10_000;
    assert.deepEqual(throttle.take(), { suppressed: 50 });
    assert.equal(throttle.take(), undefined);
  });

  it('admits again at once after a quiet interval, counting nothing', () => {
    let now = 0;
    const throttle = new LogThrottle({ intervalMs: 10_000, now: () => now });
    assert.deepEqual(throttle.take(), { suppressed: 0 });
    now = 60_000;
    assert.deepEqual(throttle.take(), { suppressed: 0 });
  });

  it('defaults to 10 s', () => {
    let now = 0;
    const throttle = new LogThrottle({ now: () => now });
    throttle.take();
    now = 9_999;
    assert.equal(throttle.take(), undefined);
    now = 10_000;
    assert.deepEqual(throttle.take(), { suppressed: 1 });
  });
});

describe('the error handler logs', () => {
  it('storage outages once per interval without a stack, unexpected errors each with their stack', async (t) => {
    const lines: string[] = [];
    let now = 0;
    const app = Fastify({ loggerInstance: createLogger('info', { write: (line: string) => void lines.push(line) }) });
    t.after(() => app.close());
    app.setErrorHandler(createErrorHandler({ codes: HTTP_ERROR_CODES, intervalMs: 10_000, now: () => now }));
    app.get('/outage', async () => {
      throw new StorageUnavailableError('storage is unavailable: connection refused; retry later', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:5432'),
      });
    });
    app.get('/bug', async () => {
      throw new TypeError('a bug');
    });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 1) statuses.push((await app.inject('/outage')).statusCode);
    now = 10_000;
    for (let i = 0; i < 5; i += 1) statuses.push((await app.inject('/outage')).statusCode);
    statuses.push((await app.inject('/bug')).statusCode, (await app.inject('/bug')).statusCode);
    assert.deepEqual(statuses, [...Array<number>(35).fill(503), 500, 500]);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const outages = parsed.filter((line) => String(line.msg).startsWith('storage unavailable'));
    assert.deepEqual(
      outages.map((line) => [line.level, line.suppressed, line.cause, line.err]),
      [
        [40, 0, 'connect ECONNREFUSED 127.0.0.1:5432', 'storage is unavailable: connection refused; retry later'],
        [40, 29, 'connect ECONNREFUSED 127.0.0.1:5432', 'storage is unavailable: connection refused; retry later'],
      ],
    );
    const bugs = parsed.filter((line) => line.msg === 'unhandled error');
    assert.equal(bugs.length, 2);
    for (const bug of bugs) assert.match(String((bug.err as { stack?: string }).stack), /TypeError: a bug\n\s+at /);
  });
});
