import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { HolderKeyService } from '../auth/holder-keys.ts';
import type { KeyVerifier } from '../auth/key-verifier.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { HTTP_ERROR_CODES } from '../errors.ts';
import type { PetService } from '../pets/pet-service.ts';
import type { AccountQuotas } from '../ratelimit/account-quotas.ts';
import { sharedSchemas } from '../pets/pet-schemas.ts';
import { ErrorSchema } from './error-schema.ts';
import type { UsageService } from '../usage/usage-service.ts';
import { buildHttpApp, type AppParts, type CoreOptions } from './core.ts';
import { registerDocsPage } from './docs-page.ts';
import { serveDocsIndexInPlaceOfRedirect } from './docs-index.ts';
import type { Metrics } from './metrics.ts';
import { accessLog } from './plugins/access-log.ts';
import { apiKeyPipeline, type RequestLimits, type UsageTallyOptions } from './plugins/api-key-pipeline.ts';
import { crossOrigin } from './plugins/cross-origin.ts';
import { deprecationNotices } from './plugins/deprecation-notices.ts';
import { keyScopes } from './plugins/key-scopes.ts';
import { publicDocument } from './public-document.ts';
import type { ReadinessMonitor } from '../readiness.ts';
import { keySchemas } from './routes/key-schemas.ts';
import { keyRoutes } from './routes/keys.ts';
import { opsRoutes } from './routes/ops.ts';
import { petRoutes } from './routes/pets.ts';
import { usageRoutes } from './routes/usage.ts';
import { usageSchemas } from './routes/usage-schemas.ts';

export interface AppDependencies {
  readonly config: Config;
  readonly clock: Clock;
  readonly keyVerifier: KeyVerifier;
  readonly pets: PetService;
  /** The account holder's keys (`/v1/keys`). */
  readonly holderKeys: HolderKeyService;
  readonly metrics: Metrics;
  readonly readiness: ReadinessMonitor;
  /** What counts each request behind a key against its limits; without it, nothing is counted. */
  readonly limits?: RequestLimits;
  /** The process logger (pino); requests log through Fastify's child loggers of it, bound to their id. */
  readonly logger: FastifyBaseLogger;
  /** The usage history's views. */
  readonly usage: UsageService;
  /** Where answered requests of known keys are counted for the usage history. */
  readonly tally: Omit<UsageTallyOptions, 'clock'>;
  /** The accounts' windows (their limit windows' table among them), derived once at start-up. */
  readonly quotas: AccountQuotas;
}

/**
 * The public API: the HTTP core (src/http/core.ts) with the public document and codes, plus its own
 * parts. Never listens: src/server.ts does.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  return buildHttpApp(publicCore(deps), publicParts(deps));
}

/** What the public API asks of the core: its schemas, codes and document. */
export function publicCore(deps: AppDependencies): CoreOptions {
  return {
    logger: deps.logger,
    requestTimeoutMs: deps.config.requestTimeoutMs,
    schemas: [...sharedSchemas, ErrorSchema, ...usageSchemas(deps.quotas.windows), ...keySchemas],
    errorCodes: HTTP_ERROR_CODES,
    onStorageUnavailable: () => deps.metrics.storageUnavailable.inc(),
    document: publicDocument(deps.config.publicBaseUrl),
  };
}

/**
 * The public API's own parts, in the order of a request: CORS (before the API key pipeline, so that
 * preflight requests need no key), the access log, the API key pipeline (key, limits, scope, and the
 * usage tally once answered), what deprecated routes announce, the reference page, what scoped
 * routes document, and the routes.
 */
export function publicParts(deps: AppDependencies): AppParts {
  const { config } = deps;
  return async (app) => {
    await app.register(crossOrigin, { origins: config.corsOrigins, maxAgeSeconds: config.corsMaxAgeSeconds });
    // Before the pipeline: its onResponse hook logs the answer before the pipeline tallies it.
    await app.register(accessLog, { metrics: deps.metrics });
    await app.register(apiKeyPipeline, {
      keyVerifier: deps.keyVerifier,
      ...(deps.limits === undefined ? {} : { limits: deps.limits }),
      tally: { ...deps.tally, clock: deps.clock },
    });
    await app.register(deprecationNotices, { publicBaseUrl: config.publicBaseUrl, metrics: deps.metrics });
    serveDocsIndexInPlaceOfRedirect(app);
    await registerDocsPage(app, { publicBaseUrl: config.publicBaseUrl });
    // After the reference page, which marks its own routes public as they are registered.
    await app.register(keyScopes);
    await app.register(opsRoutes, { readiness: deps.readiness });
    await app.register(petRoutes, { pets: deps.pets, publicBaseUrl: config.publicBaseUrl });
    await app.register(usageRoutes, { usage: deps.usage, storageTimeoutMs: config.storageTimeoutMs });
    await app.register(keyRoutes, {
      keys: deps.holderKeys,
      keyVerifier: deps.keyVerifier,
      publicBaseUrl: config.publicBaseUrl,
    });
  };
}
