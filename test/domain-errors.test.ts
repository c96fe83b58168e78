import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DomainError, NotFoundError } from '../src/errors.ts';

it('domain errors carry their code and message but no stack frames, and leave other errors theirs', () => {
  const limitBefore = Error.stackTraceLimit;
  const error = new NotFoundError('no pet with id 7');
  assert.ok(error instanceof DomainError && error instanceof Error);
  assert.equal(error.code, 'not_found');
  assert.equal(error.name, 'NotFoundError');
  assert.equal(error.stack, 'NotFoundError: no pet with id 7');
  assert.equal(Error.stackTraceLimit, limitBefore, 'the limit is restored');
  assert.match(new Error('unexpected').stack ?? '', /\n\s+at /, 'an ordinary error still has its frames');
});
