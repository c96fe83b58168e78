/**
 * Typed errors thrown by domain code. Only the HTTP edge (src/http/error-handler.ts) maps them to a
 * status and an Error body; the CLI maps them to exit codes.
 */

/** The codes an HTTP Error body can carry, each with one status (src/http/error-body.ts). */
export const HTTP_ERROR_CODES = [
  'invalid_json',
  'invalid_body',
  'invalid_query',
  'invalid_path',
  'invalid_host',
  'unauthorized',
  'insufficient_scope',
  'not_found',
  'gone',
  'method_not_allowed',
  'unsupported_media_type',
  'payload_too_large',
  'idempotency_conflict',
  'idempotency_in_flight',
  'key_limit',
  'key_inactive',
  'request_timeout',
  'expectation_failed',
  'headers_too_large',
  'rate_limited',
  'key_banned',
  'internal_error',
  'method_not_implemented',
  'service_unavailable',
] as const;

export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number];

/**
 * Codes only the operator side answers with (the admin API creates accounts and takes the console's
 * cookie); the public API never does, so its document does not list them.
 */
export const OPERATOR_ERROR_CODES = ['conflict', 'forbidden'] as const;

/** Every code: the public API's and the operator side's (src/http/error-body.ts gives each its status). */
export const ERROR_CODES = [...HTTP_ERROR_CODES, ...OPERATOR_ERROR_CODES] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export function isHttpErrorCode(code: string): code is HttpErrorCode {
  return (HTTP_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * An outcome for the client: the HTTP edge answers it with its code, and nothing logs its stack. An
 * ordinary Error otherwise, stack included.
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A request that does not match the interface: invalid_json, invalid_body, invalid_query or invalid_path. */
export class ValidationError extends DomainError {
  declare readonly code: 'invalid_body' | 'invalid_query' | 'invalid_path' | 'invalid_json';
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class GoneError extends DomainError {
  constructor(message: string) {
    super('gone', message);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message: string) {
    super('unauthorized', message);
  }
}

/** A unique name or identifier already exists (account create with a taken name). */
export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** The request is understood and authenticated, but not allowed from where it came. */
export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class IdempotencyConflictError extends DomainError {
  constructor(message: string) {
    super('idempotency_conflict', message);
  }
}

export class IdempotencyInFlightError extends DomainError {
  constructor(message: string) {
    super('idempotency_in_flight', message);
  }
}

/** A key may not do this: it lacks the scope, or would give a scope it does not hold. */
export class InsufficientScopeError extends DomainError {
  constructor(message: string) {
    super('insufficient_scope', message);
  }
}

/** The account holds as many active keys as it may: one must be revoked or expire first. */
export class KeyLimitError extends DomainError {
  constructor(message: string) {
    super('key_limit', message);
  }
}

/** The key is revoked or expired, so it cannot be rolled. */
export class KeyInactiveError extends DomainError {
  constructor(message: string) {
    super('key_inactive', message);
  }
}

/** Storage cannot be reached or did not answer in time. */
export class StorageUnavailableError extends DomainError {
  /**
   * The storage server's own words (a database or role that does not exist, a refused parameter):
   * for operators (logs, the CLI), never for API clients, to whom they would reveal internals.
   */
  readonly detail: string | undefined;

  constructor(message: string, options?: ErrorOptions & { readonly detail?: string }) {
    super('service_unavailable', message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.detail = options?.detail;
  }
}
