import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { PetService } from '../pets/pet-service.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';
import type { Metrics } from './metrics.ts';
import { accessLog } from './plugins/access-log.ts';
import { authentication, type AfterAuthentication } from './plugins/authentication.ts';
import { contentCoding } from './plugins/content-coding.ts';
import { crossOrigin } from './plugins/cross-origin.ts';
import { documents } from './plugins/documents.ts';
import { errorAnswers } from './plugins/error-answers.ts';
import { answerMalformedRequest, answerUnroutable, protocolEdges } from './plugins/protocol-edges.ts';
import { requestPolicy } from './plugins/request-policy.ts';
import { schemas } from './plugins/schemas.ts';
import { requestIdOf } from './request-id.ts';
import { methodNotAllowed } from './routes/method-not-allowed.ts';
import { opsRoutes, type ReadinessCheck } from './routes/ops.ts';
import { petRoutes } from './routes/pets.ts';
import { usageRoutes } from './routes/usage.ts';
import type { UsageService } from '../usage/usage-service.ts';
import { usageTally, type UsageTallyOptions } from './plugins/usage-tally.ts';

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
  /** The usage history's views. */
  readonly usage: UsageService;
  /** Where answered requests of known keys are counted for the usage history. */
  readonly tally: Pick<UsageTallyOptions, 'count' | 'onUncounted'>;
}

/** How often Node looks for requests past their timeout; also how late it may notice. */
const CONNECTIONS_CHECK_MS = 1000;

/**
 * Builds the HTTP app over ready-made services. Never listens: src/server.ts does, and tests bind it
 * to an ephemeral port themselves.
 *
 * The order of registration is the order of the steps of a request, and it matters: the first hook
 * stamps the request id and caching policy before anything can answer; content coding comes before
 * every route, so that all their answers go through it; CORS comes before authentication, so that
 * preflight requests need no key; the documents come before the routes they describe.
 *
 * Every hook of the app is callback-style. Most never wait, and a hook that returned a promise would
 * cost one per request; an onSend hook that waited would even let Fastify go on with a request that
 * an earlier step had answered, and answer it twice. The one hook that waits, authentication, calls
 * `done` once its promise settles.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    // request.id is the client's X-Request-Id when fit, else a new UUID. Read by requestIdOf alone,
    // which also vets the client's value, not by Fastify's requestIdHeader, which takes any value.
    genReqId: requestIdOf,
    requestIdHeader: false,
    // One access-log line per request (plugins/access-log.ts) instead of Fastify's two; every line
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
    // Never Fastify's trustProxy: the limits step finds the client address itself (src/net/client-address.ts).
    trustProxy: false,
    // Answered by the first onRequest hook instead (plugins/request-policy.ts), with the Error body.
    return503OnClosing: false,
    clientErrorHandler: answerMalformedRequest,
    frameworkErrors: answerUnroutable,
  });

  await app.register(requestPolicy);
  await app.register(protocolEdges);
  await app.register(contentCoding);
  await app.register(schemas);
  await app.register(crossOrigin, { origins: config.corsOrigins });
  await app.register(authentication, { keyVerifier: deps.keyVerifier, limits: deps.limits });
  await app.register(accessLog, { metrics: deps.metrics });
  await app.register(usageTally, { ...deps.tally, clock: deps.clock });
  await app.register(errorAnswers);
  await app.register(documents, { publicBaseUrl: config.publicBaseUrl });
  await app.register(opsRoutes, { readiness: deps.readiness, timeoutMs: config.storageTimeoutMs });
  await app.register(petRoutes, { pets: deps.pets, metrics: deps.metrics, publicBaseUrl: config.publicBaseUrl });
  await app.register(usageRoutes, { usage: deps.usage, storageTimeoutMs: config.storageTimeoutMs });
  await app.register(methodNotAllowed);
  await app.ready();
  return app;
}
