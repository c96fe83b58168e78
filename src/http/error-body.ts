import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../errors.ts';

/** HTTP status of each error code: the only place codes meet statuses. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  invalid_body: 400,
  invalid_query: 400,
  invalid_path: 400,
  unauthorized: 401,
  not_found: 404,
  gone: 410,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  idempotency_conflict: 422,
  idempotency_in_flight: 409,
  rate_limited: 429,
  key_banned: 429,
  conflict: 409,
  internal_error: 500,
  service_unavailable: 503,
};

function errorJson(code: ErrorCode, message: string): string {
  const status = STATUS_OF[code];
  return JSON.stringify({ code, message, status });
}

export function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  return reply.code(STATUS_OF[code]).type('application/json; charset=utf-8').send(errorJson(code, message));
}
