import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { LazyRequestLogger } from '../src/http/lazy-request-logger.ts';

/** request.log: bound to the request id, redacting like the process logger, and made only when used. */

function capture(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>>; children: () => number } {
  const written: string[] = [];
  const logger = pino(
    { level: 'info', base: undefined, redact: { paths: ['authorization'], censor: '[redacted]' } },
    { write: (line: string) => written.push(line) },
  );
  let children = 0;
  const original = logger.child;
  // Counts children made from this logger or any of its descendants, which inherit the method.
  logger.child = function (this: pino.Logger, ...args: Parameters<typeof original>) {
    children += 1;
    return original.apply(this, args);
  } as typeof logger.child;
  return {
    logger,
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
    children: () => children,
  };
}

describe('LazyRequestLogger', () => {
  it('makes no child logger for a request that logs nothing', () => {
    const { logger, children } = capture();
    const requestLog = new LazyRequestLogger(logger, { reqId: 'req-1' });
    assert.equal(requestLog.level, 'info');
    assert.equal(children(), 0);
  });

  it("logs with the request id, the parent's level and its redaction, through one child", () => {
    const { logger, lines, children } = capture();
    const requestLog = new LazyRequestLogger(logger, { reqId: 'req-7' });
    requestLog.debug('below the level');
    requestLog.warn({ authorization: 'Bearer pst_secret' }, 'storage unavailable');
    requestLog.error(new Error('boom'), 'unhandled error');
    assert.equal(children(), 1);
    const [warned, failed] = lines();
    assert.equal(lines().length, 2);
    assert.deepEqual(
      { level: warned?.level, reqId: warned?.reqId, msg: warned?.msg, authorization: warned?.authorization },
      { level: 40, reqId: 'req-7', msg: 'storage unavailable', authorization: '[redacted]' },
    );
    assert.equal(failed?.reqId, 'req-7');
    assert.equal((failed?.err as { message: string }).message, 'boom');
  });

  it('hands out children of the request logger', () => {
    const { logger, lines } = capture();
    new LazyRequestLogger(logger, { reqId: 'req-9' }).child({ step: 'limits' }).info('x');
    assert.deepEqual({ reqId: lines()[0]?.reqId, step: lines()[0]?.step }, { reqId: 'req-9', step: 'limits' });
  });
});
