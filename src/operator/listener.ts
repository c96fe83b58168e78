import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import type { AccountService } from '../auth/account-service.ts';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import { OperatorTokenService } from '../auth/operator-tokens.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { BODY_LIMIT_BYTES } from '../http/json-body.ts';
import { answerMalformedRequest, answerUnroutable, protocolEdges } from '../http/plugins/protocol-edges.ts';
import { requestPolicy } from '../http/plugins/request-policy.ts';
import { requestIdOf } from '../http/request-id.ts';
import type { ReadinessCheck } from '../http/routes/ops.ts';
import { clientAddressResolver } from '../net/client-address.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import type { Store } from '../storage/store.ts';
import { registerAdminDocumentRoute, registerAdminOpenApi } from './admin-openapi.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { adminSharedSchemas } from './admin/admin-schemas.ts';
import { createAdminValidatorCompiler } from './admin-validation.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { answerOtherMethods, routeMethods } from './method-not-allowed.ts';
import { cachedRender, metricsRoute } from './metrics-route.ts';
import { isGuardedPath, OperatorGate, operatorAuthentication } from './operator-auth.ts';
import { operatorErrorAnswers } from './operator-errors.ts';
import type { UsageService } from '../usage/usage-service.ts';

/** What the admin API and the console run on: the services the CLI and the public listener use. */
export interface AdminDependencies {
  readonly config: Config;
  readonly clock: Clock;
  readonly store: Store;
  readonly accounts: AccountService;
  readonly keyVerifier: KeyVerifier;
  readonly limiter: RateLimiter;
  readonly readiness: readonly ReadinessCheck[];
  readonly usage: UsageService;
  /** Failed authentications per client address and minute before 429; default 10. */
  readonly authFailuresPerMinute?: number;
}

export interface OperatorDependencies {
  readonly registry: Registry;
  /** The process logger; without it the listener logs nothing. */
  readonly logger?: FastifyBaseLogger;
  /** Monotonic milliseconds for the metrics render interval; injected by tests. */
  readonly now?: () => number;
  /** The admin API and the console; without them the listener serves /metrics alone. */
  readonly admin?: AdminDependencies;
}

/** The operator app and what tests observe of it. */
export interface OperatorApp {
  readonly app: FastifyInstance;
  /** How many times the registry has been rendered to text (once per interval at most). */
  renders(): number;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const CONNECTIONS_CHECK_MS = 1000;

/**
 * The operator listener's app: /metrics (no token: Prometheus scrapes it), the admin API under
 * /admin/v1 and the console under /console, both behind an operator token. Never listens:
 * startOperatorListener does, apart from the public listener, which serves none of it.
 *
 * Requests are refused as on the public listener (malformed requests, Expect, CONNECT, bodies that
 * are not JSON), with the same Error body, request ids and `Cache-Control: no-store`.
 */
export async function buildOperatorApp(deps: OperatorDependencies): Promise<OperatorApp> {
  const admin = deps.admin;
  const requestTimeoutMs = admin?.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    ...(deps.logger === undefined ? { logger: false } : { loggerInstance: deps.logger }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: requestTimeoutMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    trustProxy: false,
    return503OnClosing: false,
    clientErrorHandler: answerMalformedRequest,
    frameworkErrors: answerUnroutable,
  });
  const known = routeMethods(app);
  await app.register(requestPolicy);
  await app.register(protocolEdges);
  const validator = createAdminValidatorCompiler(adminSharedSchemas);
  app.setValidatorCompiler(validator);
  // Handlers send what the schemas describe; the schemas validate requests and make the document.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  for (const schema of adminSharedSchemas) app.addSchema(schema);
  await app.register(operatorErrorAnswers);
  const render = cachedRender(deps.registry, deps.now ?? (() => performance.now()));
  if (admin !== undefined) {
    const gate = new OperatorGate({
      tokens: new OperatorTokenService(admin.store.operatorTokens, admin.clock),
      limiter: admin.limiter,
      clock: admin.clock,
      clientAddressOf: clientAddressResolver(admin.config.trustProxy),
      failuresPerMinute: admin.authFailuresPerMinute,
    });
    await app.register(operatorAuthentication, { gate });
    auditLog(app);
    await registerAdminOpenApi(app);
    await app.register(adminRoutes, {
      accounts: admin.accounts,
      backend: admin.store.backend,
      keyVerifier: admin.keyVerifier,
      limiter: admin.limiter,
      clock: admin.clock,
      readiness: admin.readiness,
      probeTimeoutMs: admin.config.storageTimeoutMs,
      usage: admin.usage,
      gate,
    });
    registerAdminDocumentRoute(app);
    // CONSOLE: the console's routes (src/operator/console/console-routes.ts, plugin `consoleRoutes`)
    // register on the next line. Every /console path is behind the operator token (operator-auth.ts:
    // request.operatorToken is set) but /console/login… (the login page and its assets); only JSON
    // bodies are parsed here. Registered before the 405 step below, so its paths get 405s too.
    await app.register(consoleRoutes);
  }
  await app.register(metricsRoute, { render, contentType: deps.registry.contentType });
  await app.register(async (scope) => answerOtherMethods(scope, known));
  await app.ready();
  return { app, renders: render.count };
}

/** One line per request to the admin API and the console, naming the token's id (never the token). */
function auditLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    if (isGuardedPath(request.routeOptions.url ?? request.url.split('?')[0] ?? '')) {
      const { method, url } = request;
      const status = reply.statusCode;
      const operator = request.operatorToken?.id;
      request.log.info(
        { method, url, status, ms: Math.round(reply.elapsedTime * 10) / 10, operator },
        'operator request',
      );
    }
    done();
  });
}

export interface OperatorListenerOptions extends OperatorDependencies {
  readonly port: number;
  readonly host: string;
}

export interface OperatorListener {
  readonly app: FastifyInstance;
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  /** `${url}/metrics`, where Prometheus scrapes. */
  readonly metricsUrl: string;
  renders(): number;
  close(): Promise<void>;
}

/** Builds the operator app and binds it to METRICS_HOST:METRICS_PORT. */
export async function startOperatorListener(options: OperatorListenerOptions): Promise<OperatorListener> {
  const { app, renders } = await buildOperatorApp(options);
  try {
    await app.listen({ port: options.port, host: options.host });
  } catch (error) {
    await app.close();
    throw error;
  }
  const { address, port } = app.server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  return {
    app,
    url,
    metricsUrl: `${url}/metrics`,
    renders,
    close: async () => {
      // A scraper's idle keep-alive connection must not hold the shutdown.
      app.server.closeIdleConnections();
      await app.close();
    },
  };
}
