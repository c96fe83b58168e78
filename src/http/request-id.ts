import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** 1 to 128 visible ASCII characters: safe to echo in a header and to write in a log line. */
const FIT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The id of a request: the client's own `X-Request-Id` when it is fit, otherwise a new UUID (unique
 * across instances). An unfit value is replaced, not refused: the id serves tracing, never access.
 * Node joins repeated `X-Request-Id` headers with ", ", so two of them are never fit (the space).
 */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && FIT_REQUEST_ID.test(sent) ? sent : randomUUID();
}
