import type { FastifyReply } from 'fastify';
import { STATUS_CODES, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../errors.ts';
import { bodyStillArriving, closeUnlessBodyArrives, destroyAfterLinger } from '../net/closing-connections.ts';

/** HTTP status of each error code, on every listener: the only place codes meet statuses. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  invalid_body: 400,
  invalid_query: 400,
  invalid_path: 400,
  invalid_host: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  not_found: 404,
  gone: 410,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  idempotency_conflict: 422,
  idempotency_in_flight: 409,
  key_limit: 409,
  key_inactive: 409,
  request_timeout: 408,
  expectation_failed: 417,
  headers_too_large: 431,
  rate_limited: 429,
  key_banned: 429,
  internal_error: 500,
  method_not_implemented: 501,
  service_unavailable: 503,
  conflict: 409,
  forbidden: 403,
};

/** Longest message sent, in code points: messages quote client input, which may be kilobytes long. */
export const MESSAGE_MAX_CODE_POINTS = 300;

const JSON_TYPE = 'application/json; charset=utf-8';

/** The Error body of `code`, serialised. */
export function errorJson(code: ErrorCode, message: string): string {
  return JSON.stringify({ code, message: clipped(message), status: STATUS_OF[code] });
}

function clipped(message: string): string {
  if (message.length <= MESSAGE_MAX_CODE_POINTS) return message;
  const codePoints = Array.from(message);
  if (codePoints.length <= MESSAGE_MAX_CODE_POINTS) return message;
  return `${codePoints.slice(0, MESSAGE_MAX_CODE_POINTS - 1).join('')}…`;
}

/** An error answer: its status and its serialised Error body. */
export interface ErrorAnswer {
  readonly status: number;
  readonly body: string;
}

/** The answer to `code`: its status and its Error body. */
export function errorAnswer(code: ErrorCode, message: string): ErrorAnswer {
  return { status: STATUS_OF[code], body: errorJson(code, message) };
}

/**
 * Answers a Fastify request with the Error body; Fastify adds the length and the app's hooks the rest.
 * A refusal can come before the request's body has all arrived (no key, a body over the limit): the
 * connection is then closed unless the rest arrives soon after the answer.
 */
export function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const { status, body } = errorAnswer(code, message);
  const request = reply.raw.req;
  if (bodyStillArriving(request)) reply.raw.once('finish', () => closeUnlessBodyArrives(request));
  return reply.code(status).type(JSON_TYPE).send(body);
}

/** How writeError answers besides the code and message. */
export interface RawAnswerOptions {
  /** Header fields, sent before the body's own Content-Type and Content-Length. */
  readonly fields?: Readonly<Record<string, string>>;
  /**
   * The request's method, on a bare socket, when it is known: the answer to HEAD is the head alone
   * (with the Content-Length the body would have had, as Node and Fastify send it). A node:http
   * response knows its request's method itself.
   */
  readonly method?: string | undefined;
}

/**
 * Answers with the Error body where Fastify is not involved: a node:http response (the metrics
 * listener), or a bare socket that Node hands over without one (malformed requests, CONNECT). A bare
 * socket gets the whole response as text, ends with it, and is told so by `Connection: close`; it
 * is destroyed a moment later, whatever the client does.
 */
export function writeError(
  target: ServerResponse | Duplex,
  code: ErrorCode,
  message: string,
  options: RawAnswerOptions = {},
): void {
  const { status, body } = errorAnswer(code, message);
  const headers = {
    ...options.fields,
    'Content-Type': JSON_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
  };
  if (target instanceof ServerResponse) {
    // Node sends no body to HEAD on a response of its own, whatever end() is given.
    target.writeHead(status, headers).end(body);
    return;
  }
  const head = Object.entries({ ...headers, Connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const content = options.method === 'HEAD' ? '' : body;
  target.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${head}\r\n${content}`);
  destroyAfterLinger(target);
}
