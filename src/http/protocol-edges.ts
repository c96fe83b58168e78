import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../errors.ts';
import { errorJson, sendError, STATUS_OF } from './error-body.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';
import { NO_STORE } from './cache-control.ts';
import { excerpt, quoted } from './quote.ts';
import { requestIdOf } from './request-id.ts';

/**
 * Requests that Node would answer by itself, without the Error body or before authentication:
 * `Expect` headers (Node writes 100 Continue at once, or 417 with no body) and `CONNECT` (Node
 * drops the connection). Here they go through the app like any other request.
 */
export function installProtocolEdges(app: FastifyInstance): void {
  const awaitingContinue = new WeakSet<IncomingMessage>();
  const unsupportedExpectation = new WeakSet<IncomingMessage>();
  const server = app.server;
  // With a listener, Node leaves the interim answer to us; the request then takes the usual path.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    awaitingContinue.add(request);
    server.emit('request', request, response);
  });
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    unsupportedExpectation.add(request);
    server.emit('request', request, response);
  });
  server.on('connect', answerConnect);

  // Before authentication, like any request Node cannot serve as sent: the answer reveals nothing.
  // Both hooks are callback-style: they never wait, and an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (!unsupportedExpectation.has(request.raw)) return done();
    const expectation = quoted(request.headers.expect ?? '');
    const hint = 'send no Expect header, or Expect: 100-continue';
    // Answered here: a callback hook that sends does not call done().
    sendError(reply, 'invalid_body', `the expectation ${expectation} is not supported; ${hint}`);
  });

  // preParsing runs once authentication and limits let the request through, right before the body
  // is read: only then is the client told to send it.
  app.addHook('preParsing', (request, reply, payload, done) => {
    try {
      if (request.routeOptions.schema?.body !== undefined) refuseUnreadableBody(request);
    } catch (error) {
      return done(error as Error);
    }
    if (awaitingContinue.has(request.raw)) sendContinue(reply);
    done(null, payload);
  });
}

function sendContinue(reply: FastifyReply): void {
  if (!reply.raw.headersSent) reply.raw.writeContinue();
}

/** Bodies this service cannot read are refused before the client sends them. */
function refuseUnreadableBody(request: FastifyRequest): void {
  const contentType = request.headers['content-type'];
  const charset = contentType === undefined ? undefined : charsetOf(contentType);
  if (charset !== undefined && !UTF_8_LABELS.has(charset.toLowerCase())) {
    throw new DomainError(
      'unsupported_media_type',
      `the request body must be application/json in UTF-8 (got ${quoted(contentType ?? '')}); ` +
        'send charset=utf-8 or no charset',
    );
  }
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > BODY_LIMIT_BYTES) {
    throw new DomainError('payload_too_large', `the request body exceeds ${BODY_LIMIT_BYTES} bytes`);
  }
}

const UTF_8_LABELS = new Set(['utf-8', 'utf8']);
const CHARSET_PARAMETER = /;\s*charset\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/i;

/** The charset parameter of a media type, unquoted; undefined when there is none. */
export function charsetOf(contentType: string): string | undefined {
  const match = CHARSET_PARAMETER.exec(contentType);
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : (match[2] ?? '');
}

/** CONNECT targets no resource of this service: 405 with the Error body, then the connection closes. */
function answerConnect(request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => undefined);
  if (!socket.writable) return;
  const target = excerpt(request.url ?? '');
  const body = errorJson(
    'method_not_allowed',
    `CONNECT is not allowed (target ${JSON.stringify(target)}); this is not a proxy`,
  );
  socket.end(
    `HTTP/1.1 ${STATUS_OF.method_not_allowed} Method Not Allowed\r\nAllow: \r\n` +
      `X-Request-Id: ${requestIdOf(request)}\r\nCache-Control: ${NO_STORE}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
  // A client that keeps sending (a body after CONNECT) would hold the half-closed socket open, and
  // with it a graceful shutdown; it has had its answer.
  const linger = setTimeout(() => socket.destroy(), CONNECT_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

const CONNECT_LINGER_MS = 1000;
