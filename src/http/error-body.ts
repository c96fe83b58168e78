import type { FastifyReply } from 'fastify';
import { isHttpErrorCode, type ErrorCode, type HttpErrorCode } from '../errors.ts';

/** HTTP status of each error code: the only place codes meet statuses. */
export const STATUS_OF: Readonly<Record<HttpErrorCode, number>> = {
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
  request_timeout: 408,
  headers_too_large: 431,
  rate_limited: 429,
  key_banned: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** Longest message sent, in code points: messages quote client input, which may be kilobytes long. */
export const MESSAGE_MAX_CODE_POINTS = 300;

/** The Error body of `code`, serialised. */
export function errorJson(code: HttpErrorCode, message: string): string {
  return JSON.stringify({ code, message: clipped(message), status: STATUS_OF[code] });
}

function clipped(message: string): string {
  if (message.length <= MESSAGE_MAX_CODE_POINTS) return message;
  const codePoints = Array.from(message);
  if (codePoints.length <= MESSAGE_MAX_CODE_POINTS) return message;
  return `${codePoints.slice(0, MESSAGE_MAX_CODE_POINTS - 1).join('')}…`;
}

/**
 * A domain code that has no HTTP meaning (a CLI-only `conflict`) reaching the edge is a fault of
 * the service, so it is answered as one rather than with a code the document does not list.
 */
export function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const httpCode = isHttpErrorCode(code) ? code : 'internal_error';
  return reply.code(STATUS_OF[httpCode]).type('application/json; charset=utf-8').send(errorJson(httpCode, message));
}
