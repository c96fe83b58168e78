import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../errors.ts';
import { LogThrottle, type LogThrottleOptions } from '../log-throttle.ts';
import { sendError } from './error-body.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';
import { quoted } from './quote.ts';

export interface ErrorHandlerOptions extends LogThrottleOptions {
  /** The codes the app answers with (its document lists them); any other domain code is a 500. */
  readonly codes: readonly ErrorCode[];
  /** Called for each request answered 503 because storage was unavailable. */
  readonly onStorageUnavailable?: () => void;
}

export type ErrorHandler = (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * The HTTP edge: maps typed domain errors and Fastify's own request errors to an Error body.
 * Anything unexpected is logged with its stack and answered as a bare 500 that shows no internals:
 * those are bugs. Storage outages are expected and repeat on every request, so they are logged at
 * most once per interval (one throttle per app), with the cause and a count instead of a stack.
 */
export function createErrorHandler(options: ErrorHandlerOptions): ErrorHandler {
  const outages = new LogThrottle(options);
  const served: ReadonlySet<ErrorCode> = new Set(options.codes);
  return (error, request, reply) => {
    if (error instanceof DomainError) {
      if (error.code === 'service_unavailable') {
        options.onStorageUnavailable?.();
        logOutage(error, request, outages);
      } else request.log.debug({ code: error.code, reason: error.message }, 'request refused');
      if (served.has(error.code)) return sendError(reply, error.code, error.message);
      // A domain code this app's document does not list reaching its edge is a fault of the service.
      request.log.error({ err: error }, 'a domain error this app does not answer with');
      return sendError(reply, 'internal_error', 'the service failed to handle this request; it has been logged');
    }
    const mapped = mapFrameworkError(error as FastifyError, request);
    if (mapped) {
      request.log.debug({ code: mapped.code, reason: mapped.message }, 'request refused');
      return sendError(reply, mapped.code, mapped.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'internal_error', 'the service failed to handle this request; it has been logged');
  };
}

function logOutage(error: DomainError, request: FastifyRequest, outages: LogThrottle): void {
  const admitted = outages.take();
  if (!admitted) return;
  request.log.warn(
    { err: error.message, cause: messageOf(error.cause), suppressed: admitted.suppressed },
    'storage unavailable: requests that need it get 503',
  );
}

function messageOf(cause: unknown): string | undefined {
  if (cause instanceof Error) return cause.message || cause.name;
  return cause === undefined ? undefined : String(cause);
}

function mapFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
): { code: ErrorCode; message: string } | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'payload_too_large', message: `the request body exceeds ${BODY_LIMIT_BYTES} bytes` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return {
        code: 'unsupported_media_type',
        message: `the request body must be application/json (got ${contentTypeOf(request)})`,
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'invalid_json', message: 'the request body is empty; send a JSON object' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'invalid_body', message: 'the Content-Length header does not match the body' };
    default:
      break;
  }
  const status = error.statusCode ?? 500;
  if (status === 413)
    return { code: 'payload_too_large', message: `the request body exceeds ${BODY_LIMIT_BYTES} bytes` };
  if (status === 415) return { code: 'unsupported_media_type', message: 'the request body must be application/json' };
  if (status >= 400 && status < 500) return { code: 'invalid_body', message: 'the request could not be read' };
  return undefined;
}

function contentTypeOf(request: FastifyRequest): string {
  return quoted(request.headers['content-type'] ?? '');
}
