import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ErrorCode } from '../errors.ts';
import { answerHalfClosedClients } from '../platform/answer-half-closed-clients.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';
import { answerOtherMethods, collectRoutes } from './method-not-allowed.ts';
import { registerOpenApi, type ApiDocument } from './openapi.ts';
import { contentCoding } from './plugins/content-coding.ts';
import { errorAnswers } from './plugins/error-answers.ts';
import { answerMalformedRequest, answerUnroutable, protocolEdges } from './plugins/protocol-edges.ts';
import { requestPolicy } from './plugins/request-policy.ts';
import { requestIdOf } from './request-id.ts';
import { createValidatorCompiler, takeOnlyDocumentedQueries, type ValidationRules } from './validation.ts';

/** What differs between the apps built on the core: everything else is the same for every listener. */
export interface CoreOptions {
  /** The process logger (pino); requests log through Fastify's child loggers of it. None: nothing is logged. */
  readonly logger?: FastifyBaseLogger;
  /** Longest a request's headers, and the whole request, may take to arrive (then 408). */
  readonly requestTimeoutMs: number;
  /** Schemas the routes refer to by `$id`: components of the document, known to the validator. */
  readonly schemas: readonly object[];
  readonly validation?: ValidationRules;
  /** The codes the app answers with; its document lists them. */
  readonly errorCodes: readonly ErrorCode[];
  /** Called for each request answered 503 because storage was unavailable. */
  readonly onStorageUnavailable?: () => void;
  /** The app's OpenAPI document; none: the app documents nothing. */
  readonly document?: ApiDocument;
}

/** Registers an app's own steps and routes on the core, in the order of a request. */
export type AppParts = (app: FastifyInstance) => Promise<void>;

/** How often Node looks for requests past their timeout; also how late it may notice. */
const CONNECTIONS_CHECK_MS = 1000;

/**
 * The one HTTP core every listener's app is built on: the server options, the request policy and
 * protocol edges, conditional requests and compression, validation, one error table and writer,
 * the OpenAPI document, and 405s derived from the routes the app registered. Never listens:
 * src/server.ts does, and tests bind the app to an ephemeral port themselves.
 *
 * The order of registration is the order of the steps of a request, and it matters: the first hook
 * stamps the request id and caching policy before anything can answer; content coding comes before
 * every route, so that all their answers go through it; the document comes before the routes it
 * describes; the 405s come after every route, since they follow from them.
 *
 * Every hook is callback-style. Most never wait, and a hook that returned a promise would cost one
 * per request; an onSend hook that waited would even let Fastify go on with a request that an
 * earlier step had answered, and answer it twice. A hook that waits calls `done` once its promise
 * settles.
 */
export async function buildHttpApp(options: CoreOptions, addParts: AppParts): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    // request.id is the client's X-Request-Id when fit, else a new UUID. Read by requestIdOf alone,
    // which also vets the client's value, not by Fastify's requestIdHeader, which takes any value.
    genReqId: requestIdOf,
    requestIdHeader: false,
    // One log line per request (the apps' own onResponse hooks) instead of Fastify's two; every line
    // of a request carries its id as `reqId`.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Slow or silent clients are cut off by Node's own sweep (408, then close) once their headers
    // or whole request take longer than this. Not Fastify's connectionTimeout: a per-socket idle
    // timer re-armed on every read and write cost ~1.5% of a cached GET.
    requestTimeout: options.requestTimeoutMs,
    http: {
      headersTimeout: options.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      // An HTTP/1.1 request without Host is answered by the protocol edges, with the Error body;
      // Node would answer a bare 400.
      requireHostHeader: false,
    },
    // Longer than common load-balancer idle timeouts (60 s), so the balancer closes first.
    keepAliveTimeout: 72_000,
    // Never Fastify's trustProxy: the steps that need the client address find it themselves
    // (src/net/client-address.ts).
    trustProxy: false,
    // Answered by the first onRequest hook instead (plugins/request-policy.ts), with the Error body.
    return503OnClosing: false,
    clientErrorHandler: answerMalformedRequest,
    frameworkErrors: answerUnroutable,
  });
  answerHalfClosedClients(app.server);
  const routes = collectRoutes(app);
  await app.register(requestPolicy);
  await app.register(protocolEdges);
  await app.register(contentCoding);
  useSchemas(app, options);
  await app.register(errorAnswers, {
    codes: options.errorCodes,
    ...(options.onStorageUnavailable ? { onStorageUnavailable: options.onStorageUnavailable } : {}),
  });
  if (options.document !== undefined) await registerOpenApi(app, options.document);
  await addParts(app);
  await app.register(async (scope) => answerOtherMethods(scope, routes));
  await app.ready();
  return app;
}

/**
 * Requests are validated against the route schemas (validation.ts), and the operations of the
 * document take no query parameter it does not list. Responses are not serialised by
 * them: handlers send what the schemas describe, often as ready bytes; the response schemas make the
 * document, and the contract tests hold every answer to it.
 */
function useSchemas(app: FastifyInstance, options: CoreOptions): void {
  app.setValidatorCompiler(createValidatorCompiler(options.schemas, options.validation));
  const prefix = options.document?.prefix;
  if (prefix !== undefined) app.addHook('onRoute', (route) => takeOnlyDocumentedQueries(route, prefix));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  for (const schema of options.schemas) app.addSchema(schema);
}
