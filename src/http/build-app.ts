import cors from '@fastify/cors';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import { METHODS } from 'node:http';
import type { Socket } from 'node:net';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { DomainError, type HttpErrorCode } from '../errors.ts';
import { sharedSchemas } from '../pets/pet-schemas.ts';
import type { PetService } from '../pets/pet-service.ts';
import { authenticationHook, refuseUnauthenticated, type AfterAuthentication } from './auth-hook.ts';
import { errorJson, sendError, STATUS_OF } from './error-body.ts';
import { createErrorHandler } from './error-handler.ts';
import { BODY_LIMIT_BYTES, parseJsonBody } from './json-body.ts';
import type { Metrics } from './metrics.ts';
import { registerOpenApi, registerOpenApiDocumentRoute } from './openapi.ts';
import { registerOpsRoutes, type ReadinessCheck } from './ops-routes.ts';
import { registerPetRoutes } from './pets-routes.ts';
import { createValidatorCompiler } from './validation.ts';
import { serveDocsIndexInPlaceOfRedirect } from './docs-index.ts';
import { installProtocolEdges } from './protocol-edges.ts';
import { installContentCoding } from './content-coding.ts';
import { excerpt, quoted } from './quote.ts';
import { NO_STORE, PUBLIC_DOCUMENT } from './cache-control.ts';
import { requestIdOf } from './request-id.ts';
import { registerUsageRoutes, UsageSchema } from './usage-routes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A public document: its successful answers may be cached briefly (PUBLIC_DOCUMENT). */
    cacheable?: boolean;
  }
}

export interface AppDependencies {
  readonly config: Config;
  readonly clock: Clock;
  readonly keyVerifier: KeyVerifier;
  readonly pets: PetService;
  readonly metrics: Metrics;
  readonly readiness: readonly ReadinessCheck[];
  /** The per-request limits step after authentication; without it, requests are only authenticated. */
  readonly limits?: AfterAuthentication;
  /** The process logger (pino); requests log through Fastify's child loggers of it, bound to their id. */
  readonly logger: FastifyBaseLogger;
}

/**
 * What browsers may read from responses when CORS is on: rate limits, Retry-After, Link, deprecation,
 * request id, and the ETag to send back in If-None-Match.
 */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Link',
  'Location',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  'X-Request-Id',
  'ETag',
];

/** Request headers browsers may send when CORS is on, besides the CORS-safelisted ones. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'];

/** Paths of v1 and the methods each answers; any other method gets 405 with Allow. */
const KNOWN_PATHS: Record<string, string[]> = {
  '/v1/pets': ['GET', 'HEAD', 'POST'],
  '/v1/pets/:petId': ['GET', 'HEAD'],
  '/v1/usage': ['GET', 'HEAD'],
};
/** How often Node looks for requests past their timeout; also how late it may notice. */
const CONNECTIONS_CHECK_MS = 1000;
/** Every method Node parses; CONNECT never reaches routing (src/http/protocol-edges.ts answers it). */
const ALL_METHODS = METHODS.filter((method) => method !== 'CONNECT');

/** Builds the HTTP app over ready-made services. Never listens: src/server.ts does. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // request.id is the client's X-Request-Id when fit, else a new UUID. Read by requestIdOf alone,
    // which also vets the client's value, not by Fastify's requestIdHeader, which takes any value.
    genReqId: requestIdOf,
    requestIdHeader: false,
    // One access-log line per request, written in onResponse, instead of Fastify's two; every line
    // of a request carries its id as `reqId`.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Slow or silent clients are cut off by Node's own sweep (408, then close) once their headers
    // or whole request take longer than this. Not Fastify's connectionTimeout: a per-socket idle
    // timer re-armed on every read and write cost ~1.5% of a cached GET.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.requestTimeoutMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    // Longer than common load-balancer idle timeouts (60 s), so the balancer closes first.
    keepAliveTimeout: 72_000,
    // Never Fastify's trustProxy: the limits step finds the client address itself (client-address.ts).
    trustProxy: false,
    // Answered by the first onRequest hook instead, with the Error body every non-2xx carries.
    return503OnClosing: false,
    clientErrorHandler: answerMalformedRequest,
    // URL errors found while routing, before any hook runs.
    frameworkErrors: (error, request, reply) => {
      // Answered before any hook, so the first hook's headers are set here.
      reply.header('x-request-id', request.id).header('cache-control', NO_STORE);
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
        return sendError(reply, 'invalid_path', 'a path segment is too long');
      if (error.code === 'FST_ERR_BAD_URL')
        return sendError(reply, 'invalid_path', `the path is not valid percent-encoding: ${quoted(request.url)}`);
      return sendError(reply, 'invalid_path', 'the request path could not be routed');
    },
  });

  app.decorateRequest('principal', undefined);
  app.decorateRequest('standing', undefined);
  installFirstHook(app);
  installProtocolEdges(app);
  // Before any plugin registers routes, so that every route's answers go through it.
  installContentCoding(app);
  app.setValidatorCompiler(createValidatorCompiler(sharedSchemas));
  // Handlers send pre-serialised strings; response schemas exist for the document and its test.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  for (const schema of sharedSchemas) app.addSchema(schema);
  app.addSchema(UsageSchema);

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
      return parseJsonBody(body);
    },
  );

  if (config.corsOrigins.length > 0) {
    // Registered before authentication so that preflight requests are answered without a key.
    await app.register(cors, {
      origin: [...config.corsOrigins],
      exposedHeaders: EXPOSED_HEADERS,
      allowedHeaders: ALLOWED_HEADERS,
    });
  }
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true, cacheable: true };
    if (route.config?.cacheable !== true) return;
    const hooks = route.onSend;
    if (hooks === undefined) route.onSend = allowBriefCaching;
    else route.onSend = Array.isArray(hooks) ? [...hooks, allowBriefCaching] : [hooks, allowBriefCaching];
  });
  app.addHook('onRequest', authenticationHook(deps.keyVerifier, deps.limits ?? refuseUnauthenticated));
  // Hooks that never wait are callback-style: an async one costs a promise and a microtask per request.
  app.addHook('onResponse', (request, reply, done) => {
    const { method, url } = request;
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    deps.metrics.requests.inc({ method, route, status });
    deps.metrics.duration.observe({ method, route }, reply.elapsedTime / 1000);
    // The key's id, never the key: the line must be safe to ship to any log store.
    const key = request.principal?.keyId;
    request.log.info({ method, url, status, ms: Math.round(reply.elapsedTime * 10) / 10, key }, 'request');
    done();
  });

  app.setErrorHandler(createErrorHandler());
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'not_found', `no route for ${request.method} ${excerpt(request.url.split('?')[0] ?? '')}`),
  );

  serveDocsIndexInPlaceOfRedirect(app);
  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl });
  registerOpenApiDocumentRoute(app);
  registerOpsRoutes(app, { readiness: deps.readiness, timeoutMs: config.storageTimeoutMs });
  registerPetRoutes(app, { pets: deps.pets, metrics: deps.metrics, publicBaseUrl: config.publicBaseUrl });
  registerUsageRoutes(app);
  registerMethodNotAllowed(app);
  await app.ready();
  return app;
}

/**
 * The first onRequest hook, run for every routed request (404s included): it stamps the request id
 * and the caching policy on the response before any later step can answer, and once shutdown
 * begins, requests still arriving on open connections (pipelined or kept alive) get 503 and the
 * connection closes, so clients retry on another instance; in-flight requests finish. One hook for
 * all of it: each hook costs time on the cached GET path, which is measured.
 */
function installFirstHook(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (request, reply, done) => {
    // Public documents are upgraded to PUBLIC_DOCUMENT once they succeed (allowBriefCaching).
    reply.header('x-request-id', request.id).header('cache-control', NO_STORE);
    if (!closing) return done();
    reply.header('connection', 'close');
    // Answered here: a callback hook that sends does not call done().
    sendError(reply, 'service_unavailable', 'the service is shutting down; retry the request');
  });
}

/** Public documents, and only their successful answers, may be cached briefly; @fastify/static says max-age=0. */
async function allowBriefCaching(_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode < 400) reply.header('cache-control', PUBLIC_DOCUMENT);
  return payload;
}

function registerMethodNotAllowed(app: FastifyInstance): void {
  // Fastify routes only the common methods unless told; the others would fall through to 404.
  for (const method of ALL_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  for (const [url, allowed] of Object.entries(KNOWN_PATHS)) {
    const others = ALL_METHODS.filter((method) => !allowed.includes(method));
    const allow = allowed.join(', ');
    const answer = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      reply.header('allow', allow);
      return sendError(
        reply,
        'method_not_allowed',
        `${request.method} is not allowed on ${url.replace(':petId', '{petId}')}; allowed: ${allow}`,
      );
    };
    app.route({
      method: others,
      url,
      schema: { hide: true },
      // Answered after authentication and limits but before the body is read: its body is irrelevant.
      onRequest: async (request, reply) => {
        answer(request, reply);
      },
      handler: answer,
    });
  }
}

/**
 * Requests too malformed for HTTP parsing, or too slow to arrive, still get an Error body, then the
 * connection closes.
 */
function answerMalformedRequest(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const { code, reason, message } = clientErrorAnswer(error.code);
  const body = errorJson(code, message);
  // No request was parsed, so no client id can be known: a new one, as on every other answer.
  socket.end(
    `HTTP/1.1 ${STATUS_OF[code]} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `X-Request-Id: ${randomUUID()}\r\nCache-Control: ${NO_STORE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function clientErrorAnswer(nodeCode: string | undefined): { code: HttpErrorCode; reason: string; message: string } {
  if (nodeCode === 'HPE_HEADER_OVERFLOW')
    return {
      code: 'headers_too_large',
      reason: 'Request Header Fields Too Large',
      message: 'the request headers are too large',
    };
  if (nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { code: 'request_timeout', reason: 'Request Timeout', message: 'the request did not arrive in time' };
  return { code: 'invalid_body', reason: 'Bad Request', message: 'the request is not valid HTTP/1.1' };
}
