import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { DomainError, type HttpErrorCode } from '../../errors.ts';
import { NO_STORE } from '../cache-control.ts';
import { sendError, writeError } from '../error-body.ts';
import { BODY_LIMIT_BYTES, parseJsonBody } from '../json-body.ts';
import { documentedPath } from '../document-paths.ts';
import { hostProblemOf, type HostProblem } from '../../net/host-names.ts';
import { methodOfRefusedRequest } from '../../net/request-line.ts';
import { excerpt, quoted } from '../quote.ts';
import { requestIdOf } from '../request-id.ts';
import { stampRequestIdAndCaching } from '../cache-control.ts';

/**
 * Requests HTTP refuses or this service cannot serve as sent, answered with the Error body like any
 * other refusal instead of by Node or Fastify alone: a host that is missing, repeated or malformed
 * (`400 invalid_host`, on every listener: RFC 9112 section 3.2), `Expect` headers (Node writes 100 Continue at
 * once, or 417 with no body), `CONNECT` (Node drops the connection), bodies that are not JSON in
 * UTF-8, too large, or sent where the route takes none, and (through the app's options,
 * answerMalformedRequest and answerUnroutable) requests too malformed to parse or to route.
 */
export const protocolEdges = fastifyPlugin(
  async (app: FastifyInstance) => {
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
    // Answered here: a callback hook that sends does not call done().
    app.addHook('onRequest', (request, reply, done) => {
      latestExchanges.set(request.raw.socket, reply.raw);
      const hostProblem = hostProblemOf(request.raw);
      if (hostProblem !== undefined) {
        sendError(reply, 'invalid_host', hostProblemMessage(hostProblem));
        return;
      }
      if (!unsupportedExpectation.has(request.raw)) return done();
      sendError(reply, 'expectation_failed', unsupportedExpectationMessage(request.headers.expect));
    });

    // preParsing runs once authentication and limits let the request through, right before the body
    // is read: only then is the client told to send it.
    app.addHook('preParsing', (request, reply, payload, done) => {
      try {
        if (request.routeOptions.schema?.body !== undefined) refuseUnreadableBody(request);
        else if (!request.is404) refuseAnyBody(request);
      } catch (error) {
        return done(error as Error);
      }
      if (awaitingContinue.has(request.raw)) sendContinue(reply);
      done(null, payload);
    });

    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
      async (request: FastifyRequest, body: Buffer) => {
        const encoding = request.headers['content-encoding'];
        if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
          throw new DomainError(
            'unsupported_media_type',
            `Content-Encoding ${quoted(encoding)} is not supported; send the JSON uncompressed`,
          );
        }
        // An empty body where the route takes none is no body (refuseAnyBody let it through).
        if (body.length === 0 && request.routeOptions.schema?.body === undefined) return undefined;
        return parseJsonBody(body);
      },
    );
  },
  { name: 'protocol-edges' },
);

/** Fastify's `frameworkErrors`: URL errors found while routing, before any hook runs. */
export function answerUnroutable(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Answered before any hook, so the first hook's headers are set here.
  stampRequestIdAndCaching(request, reply);
  // A target naming a bad port (`http://host:99999/…`) fails routing: its host is what is wrong.
  const hostProblem = hostProblemOf(request.raw);
  if (hostProblem !== undefined) return sendError(reply, 'invalid_host', hostProblemMessage(hostProblem));
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(reply, 'invalid_path', 'a path segment is too long');
  if (error.code === 'FST_ERR_BAD_URL')
    return sendError(reply, 'invalid_path', `the path is not valid percent-encoding: ${quoted(request.url)}`);
  return sendError(reply, 'invalid_path', 'the request path could not be routed');
}

const PORT_RULE = 'optional port from 0 to 65535';

/** What a request with a host problem is told: what was wrong, and what to send. */
function hostProblemMessage(problem: HostProblem): string {
  switch (problem.kind) {
    case 'repeated':
      return `the request has ${problem.count} Host headers; send exactly one`;
    case 'missing':
      return 'a request must name its host in a Host header';
    case 'malformed':
      return `the Host header ${quoted(problem.host)} is not a host name or IP address with an ${PORT_RULE}`;
    case 'malformed-target':
      return (
        `the request target's host ${quoted(problem.authority)} is not a host name or IP address with an ` +
        `${PORT_RULE} (and no user information)`
      );
    case 'other-target':
      return (
        `the request target names the host ${quoted(problem.authority)} and the Host header ` +
        `${quoted(problem.host)}: they must be the same`
      );
  }
}

/** Any expectation but 100-continue: 417 (RFC 9110 §10.1.1). */
export function unsupportedExpectationMessage(expect: string | undefined): string {
  return `the expectation ${quoted(expect ?? '')} is not supported; send no Expect header, or Expect: 100-continue`;
}

/**
 * The response to the last request Fastify took from each connection. A refusal that comes while
 * that request is still arriving (its body too slow, or malformed) concerns it: its method is known,
 * and once it has been answered it gets no second answer.
 */
const latestExchanges = new WeakMap<Socket, ServerResponse>();

/** What Node's parser says of a request it refused (node:http's clientError). */
interface ClientError extends Error {
  readonly code?: string;
  /** The bytes being parsed, when the parser failed on them. */
  readonly rawPacket?: unknown;
  /** Where in them it failed. */
  readonly bytesParsed?: unknown;
}

/**
 * Fastify's `clientErrorHandler`: requests too malformed for HTTP parsing, or too slow to arrive,
 * still get an Error body, then the connection closes. The answer to HEAD has none. The method is
 * that of the request still arriving, if Fastify took it; else it is read from the bytes Node was
 * parsing. When neither shows it (headers that time out halfway come with no bytes) the body is sent.
 */
export function answerMalformedRequest(error: ClientError, socket: Socket): void {
  if (!socket.writable) {
    // Answered and ended already (a request that then timed out, say): nothing more can be said on it.
    socket.destroy();
    return;
  }
  const exchange = latestExchanges.get(socket);
  const arriving = exchange !== undefined && !exchange.req.complete ? exchange : undefined;
  if (arriving?.headersSent) {
    // Answered already (a 401 before its body, a HEAD): a second answer would answer nothing.
    socket.destroy();
    return;
  }
  const method = arriving?.req.method ?? methodOfRefusedRequest(error.rawPacket, error.bytesParsed);
  const { code, message } = clientErrorAnswer(error.code, method);
  // No request was parsed, so no client id can be known: a new one, as on every other answer.
  writeError(socket, code, message, { fields: { 'X-Request-Id': randomUUID(), 'Cache-Control': NO_STORE }, method });
}

function clientErrorAnswer(
  nodeCode: string | undefined,
  method: string | undefined,
): { code: HttpErrorCode; message: string } {
  if (nodeCode === 'HPE_HEADER_OVERFLOW')
    return { code: 'headers_too_large', message: 'the request headers are too large' };
  if (nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { code: 'request_timeout', message: 'the request did not arrive in time' };
  // A request line with a method HTTP/1.1 parsers do not know: 501 (RFC 9110 §9.1, §15.6.2).
  if (nodeCode === 'HPE_INVALID_METHOD' && method !== undefined)
    return {
      code: 'method_not_implemented',
      message: `the method ${quoted(method)} is not implemented (methods are case-sensitive); use GET, HEAD or POST`,
    };
  return { code: 'invalid_body', message: 'the request is not valid HTTP/1.1' };
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

/**
 * A route without a body schema takes no body: one sent (`{"scopes": […]}` to a revocation, say)
 * would be ignored without a word, so it is refused before it is read. No body and an empty one
 * (`Content-Length: 0`) are the same; a chunked body is refused whatever its length, which is
 * known only once it has been read.
 */
function refuseAnyBody(request: FastifyRequest): void {
  const { headers } = request;
  if (headers['transfer-encoding'] === undefined && Number(headers['content-length'] ?? 0) === 0) return;
  const operation = `${request.method} ${documentedPath(request.routeOptions.url ?? '')}`;
  throw new DomainError('invalid_body', `${operation} takes no request body; send none (or Content-Length: 0)`);
}

const UTF_8_LABELS = new Set(['utf-8', 'utf8']);
const CHARSET_PARAMETER = /;\s*charset\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/i;

/** The charset parameter of a media type, unquoted; undefined when there is none. */
function charsetOf(contentType: string): string | undefined {
  const match = CHARSET_PARAMETER.exec(contentType);
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : (match[2] ?? '');
}

/** CONNECT targets no resource of this service: 405 with the Error body, then the connection closes. */
function answerConnect(request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => undefined);
  if (!socket.writable) return;
  const target = excerpt(request.url ?? '');
  writeError(
    socket,
    'method_not_allowed',
    `CONNECT is not allowed (target ${JSON.stringify(target)}); this is not a proxy`,
    {
      fields: { Allow: '', 'X-Request-Id': requestIdOf(request), 'Cache-Control': NO_STORE },
    },
  );
}
