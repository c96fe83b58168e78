import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConflictError,
  DomainError,
  GoneError,
  IdempotencyConflictError,
  IdempotencyInFlightError,
  NotFoundError,
  StorageUnavailableError,
  UnauthorizedError,
  ValidationError,
  isHttpErrorCode,
} from '../src/errors.ts';

describe('domain errors', () => {
  it('carry their code, message and own class name, and are Errors', () => {
    const cases: [DomainError, string, string][] = [
      [new NotFoundError('no pet with id 7'), 'not_found', 'NotFoundError'],
      [new GoneError('GET /v1/pets/{id} was removed'), 'gone', 'GoneError'],
      [new UnauthorizedError('missing API key'), 'unauthorized', 'UnauthorizedError'],
      [new ConflictError('account "ada" exists'), 'conflict', 'ConflictError'],
      [new IdempotencyConflictError('key reused'), 'idempotency_conflict', 'IdempotencyConflictError'],
      [new IdempotencyInFlightError('still running'), 'idempotency_in_flight', 'IdempotencyInFlightError'],
      [new ValidationError('invalid_query', 'limit must be 1-100'), 'invalid_query', 'ValidationError'],
      [new StorageUnavailableError('storage is unavailable'), 'service_unavailable', 'StorageUnavailableError'],
    ];
    for (const [error, code, name] of cases) {
      assert.ok(error instanceof DomainError && error instanceof Error, name);
      assert.equal(error.code, code);
      assert.equal(error.name, name);
      assert.match(String(error), new RegExp(`^${name}: `));
    }
    assert.equal(new NotFoundError('no pet with id 7').message, 'no pet with id 7');
  });

  it('a storage outage keeps its cause, and only when there is one', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    assert.equal(new StorageUnavailableError('storage is unavailable', { cause }).cause, cause);
    assert.equal('cause' in new StorageUnavailableError('storage is unavailable'), false);
    assert.equal('cause' in new StorageUnavailableError('storage is unavailable', { cause: undefined }), false);
  });

  it('have a stack like any error, so an outage can be traced to where it was raised', () => {
    const limitBefore = Error.stackTraceLimit;
    const error = new StorageUnavailableError('storage is unavailable');
    assert.match(error.stack ?? '', /^StorageUnavailableError: storage is unavailable\n\s+at /);
    assert.equal(Error.stackTraceLimit, limitBefore, 'making one leaves the process-wide limit alone');
  });

  it('every code but conflict has an HTTP status', () => {
    assert.equal(isHttpErrorCode('not_found'), true);
    assert.equal(isHttpErrorCode('service_unavailable'), true);
    assert.equal(isHttpErrorCode('conflict'), false);
  });
});
