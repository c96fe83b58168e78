import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import type { AccountService } from '../auth/account-service.ts';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import { OperatorSessionService } from '../auth/operator-sessions.ts';
import { OperatorTokenService } from '../auth/operator-tokens.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ERROR_CODES } from '../errors.ts';
import { buildHttpApp, type CoreOptions } from '../http/core.ts';
import { clientAddressResolver } from '../net/client-address.ts';
import { servedHostNames } from '../net/host-names.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import type { ReadinessMonitor } from '../readiness.ts';
import type { Store } from '../domain/store.ts';
import type { UsageService } from '../usage/usage-service.ts';
import { ADMIN_DOCUMENT } from './admin/admin-openapi.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { adminSharedSchemas } from './admin/admin-schemas.ts';
import type { AccountQuotas } from '../ratelimit/account-quotas.ts';
import { AuditService } from '../audit/audit-service.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { listenerEdges } from './listener-edges.ts';
import { cachedRender, metricsRoute } from './metrics-route.ts';
import { isGuardedPath, OperatorGate, operatorAuthentication } from './operator-auth.ts';

/** What the admin API and the console run on: the services the CLI and the public listener use. */
export interface AdminDependencies {
  readonly config: Config;
  readonly clock: Clock;
  readonly store: Store;
  readonly accounts: AccountService;
  readonly keyVerifier: KeyVerifier;
  readonly limiter: RateLimiter;
  readonly readiness: ReadinessMonitor;
  readonly usage: UsageService;
  /** The accounts' windows (their limit windows' table among them), derived once at start-up. */
  readonly quotas: AccountQuotas;
  /** Failed authentications per client address and minute before 429; default 10. */
  readonly authFailuresPerMinute?: number;
}

export interface OperatorDependencies {
  readonly registry: Registry;
  /** The process logger; without it the app logs nothing. */
  readonly logger?: FastifyBaseLogger;
  /** Monotonic milliseconds for the metrics render interval; injected by tests. */
  readonly now?: () => number;
  /** The admin API and the console; without them the app serves /metrics alone. */
  readonly admin?: AdminDependencies;
}

/** The operator app and what tests observe of it. */
export interface OperatorApp {
  readonly app: FastifyInstance;
  /** How many times the registry has been rendered to text (once per interval at most). */
  renders(): number;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The operator listener's app: the HTTP core (src/http/core.ts) plus /metrics (no token:
 * Prometheus scrapes it), and with the admin dependencies operator authentication, the admin API
 * under /admin/v1 (its own document, validation rules and codes) and the console under /console.
 * Before all of them, the listener's edges: only the host names it serves (loopback names, and with
 * the admin dependencies METRICS_HOST and OPERATOR_HOSTS), and nosniff on every answer.
 * Never listens: src/server.ts does, apart from the public listener, which serves none of it.
 */
export async function buildOperatorApp(deps: OperatorDependencies): Promise<OperatorApp> {
  const { admin } = deps;
  const render = cachedRender(deps.registry, deps.now ?? (() => performance.now()));
  const core: CoreOptions = {
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
    requestTimeoutMs: admin?.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    schemas: admin === undefined ? [] : adminSharedSchemas(admin.quotas.windows),
    validation: { absentBodyIsEmpty: true },
    errorCodes: ERROR_CODES,
    ...(admin === undefined ? {} : { document: ADMIN_DOCUMENT }),
  };
  const hostNames = servedHostNames(admin?.config.metrics?.host, admin?.config.operatorHosts ?? []);
  const app = await buildHttpApp(core, async (scope) => {
    await scope.register(listenerEdges, { hostNames });
    if (admin !== undefined) await registerAdmin(scope, admin);
    await scope.register(metricsRoute, { render, contentType: deps.registry.contentType });
  });
  return { app, renders: render.count };
}

async function registerAdmin(app: FastifyInstance, admin: AdminDependencies): Promise<void> {
  const tokens = new OperatorTokenService(admin.store, admin.clock, admin.store.audit);
  const gate = new OperatorGate({
    tokens,
    sessions: new OperatorSessionService(admin.store.operatorSessions, admin.clock, admin.config.operatorSession),
    limiter: admin.limiter,
    clock: admin.clock,
    clientAddressOf: clientAddressResolver(admin.config.trustProxy),
    failuresPerMinute: admin.authFailuresPerMinute,
    ipv6LimitPrefix: admin.config.ipv6LimitPrefix,
    storageAnswered: () => admin.readiness.answered(admin.store.backend),
  });
  await app.register(operatorAuthentication, { gate });
  operatorRequestLog(app);
  await app.register(adminRoutes, {
    accounts: admin.accounts,
    backend: admin.store.backend,
    keyVerifier: admin.keyVerifier,
    limiter: admin.limiter,
    clock: admin.clock,
    readiness: admin.readiness,
    probeTimeoutMs: admin.config.storageTimeoutMs,
    usage: admin.usage,
    quotas: admin.quotas,
    gate,
    operatorTokens: tokens,
    audit: new AuditService(admin.store.audit),
  });
  // Every /console path is behind the operator token but /console/login… (the login page and its assets).
  await app.register(consoleRoutes);
}

/**
 * One line per request to the admin API and the console, naming the token's id (never the token):
 * what was asked and answered. What changed is the audit trail's (operator/audit/), stored with each change.
 */
function operatorRequestLog(app: FastifyInstance): void {
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
