import { pino, type DestinationStream, type Logger } from 'pino';
import { AccountService } from './auth/account-service.ts';
import { HolderKeyService } from './auth/holder-keys.ts';
import { KeyVerifier } from './auth/key-verifier.ts';
import { systemClock, type Clock } from './clock.ts';
import { GET_PET_SUNSET, type Config } from './config.ts';
import type { AppDependencies } from './http/app.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import { redactKeys } from './http/redact.ts';
import { exportReadiness } from './http/routes/ops.ts';
import { clientAddressResolver } from './net/client-address.ts';
import { PetService } from './pets/pet-service.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import { MemoryLimiter } from './ratelimit/memory-limiter.ts';
import { AccountQuotas } from './ratelimit/account-quotas.ts';
import { RateLimitPolicy } from './ratelimit/rate-limit-policy.ts';
import type { RedisLimiter } from './ratelimit/redis-limiter.ts';
import { logDestination } from './log-destination.ts';
import { openStore } from './storage/open-store.ts';
import { checkLimitWindows, LIMIT_WINDOWS, type LimitWindows } from './domain/limit-windows.ts';
import type { Store } from './domain/store.ts';
import { ReadinessMonitor, type ReadinessCheck } from './readiness.ts';
import { LogThrottle } from './log-throttle.ts';
import { UsageFlusher } from './usage/usage-flusher.ts';
import { UsageService } from './usage/usage-service.ts';
import { UsageTally } from './usage/usage-tally.ts';

/** Everything the HTTP app and the CLI run on, built once from the configuration. */
export interface Services extends AppDependencies {
  readonly store: Store;
  readonly accounts: AccountService;
  readonly metrics: Metrics;
  readonly limiter: RateLimiter;
  readonly usageFlusher: UsageFlusher;
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  /** Process metrics (CPU, heap) only make sense once per process. */
  readonly collectProcessMetrics?: boolean;
  /** The process logger; default: pino JSON lines on stdout at LOG_LEVEL. */
  readonly logger?: Logger;
  /** Probe storage and Redis in the background for /metrics and the status (default); a CLI command needs none. */
  readonly watchReadiness?: boolean;
  /**
   * The accounts' limit windows (default LIMIT_WINDOWS): checked and derived once, here. A table may
   * add windows to LIMIT_WINDOWS' (tests do); its windows count, and show, everywhere.
   */
  readonly limitWindows?: LimitWindows;
}

/**
 * One logger for the app and the services, so every line, the access log's included, has the same
 * shape and redaction. Lines are gathered into larger writes instead of one write(2) per request
 * (src/log-destination.ts; 64 KiB ones once src/platform/chunked-log-writes.ts is loaded), and
 * flushed at least once a second and on shutdown.
 * `destination` is a file descriptor, or any stream (tests collect lines in memory).
 *
 * Keys are redacted from the finished line (`streamWrite`), not field by field: clients put them in
 * URLs, headers and bodies that reach messages, Fastify's lines and the services' alike, and only
 * the serialised line is sure to hold all of them.
 */
export function createLogger(level: string, destination: number | DestinationStream = 1): Logger {
  const redact = {
    paths: ['req.headers.authorization', 'headers.authorization', 'authorization'],
    censor: '[redacted]',
  };
  const stream = typeof destination === 'number' ? logDestination(destination) : destination;
  return pino({ level, redact, hooks: { streamWrite: redactKeys } }, stream);
}

export async function buildServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const quotas = new AccountQuotas(checkLimitWindows(options.limitWindows ?? LIMIT_WINDOWS));
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = await openStore(config, {
    onIdleError: (error) =>
      logger.warn({ err: error.message }, 'PostgreSQL closed an idle connection; the pool opens a new one when needed'),
  });
  const metrics = createMetrics({ collectProcessMetrics: options.collectProcessMetrics ?? false });
  const keyVerifier = new KeyVerifier(store.keys, clock, {
    ttlMs: config.keyCacheTtlMs,
    // Read at request time, once the policy below exists.
    banEndOf: (keyId) => policy.banEnd(keyId),
  });
  const pets = new PetService(store, clock, { deprecatedAt: config.deprecationDate, sunsetAt: GET_PET_SUNSET });
  const redis =
    config.redisUrl === undefined
      ? undefined
      : await openRedisLimiter(config.redisUrl, config, clock, metrics, logger).catch(async (error: unknown) => {
          await store.close();
          throw error;
        });
  const limiter: RateLimiter = redis ?? new MemoryLimiter({ now: () => clock.now() });
  const policy = new RateLimitPolicy(limiter, store.bans, clock, {
    quotas,
    anonymousPerMinute: config.anonLimitPerMinute,
    ipv6LimitPrefix: config.ipv6LimitPrefix,
    usagePerMinute: config.usagePerMinute,
    ban: config.ban,
    onBanLifted: (keyId) => keyVerifier.invalidateKey(keyId),
    onBanNotRecorded: (keyId, error) =>
      logger.warn({ err: error.message, keyId }, 'a ban could not be recorded in storage; it holds in the limiter'),
    onRefused: (reason) => metrics.rateLimited.inc({ reason }),
  });
  const accounts = new AccountService(store, clock, policy, quotas.windows);
  const tally = new UsageTally();
  const usageFlusher = createUsageFlusher(tally, store, clock, config, metrics, logger);
  const usage = new UsageService(store.usage, usageFlusher, clock, { sunset: GET_PET_SUNSET });
  const checks: ReadinessCheck[] = [{ name: store.backend, check: () => store.ping() }];
  if (redis) checks.push({ name: 'redis', check: () => redis.ping() });
  const readiness = new ReadinessMonitor(checks, { timeoutMs: config.storageTimeoutMs, clock });
  if (options.watchReadiness ?? true) readiness.start();
  exportReadiness(metrics.registry, readiness);
  const purgeTimer = setInterval(() => void pets.purgeIdempotencyKeys().catch(() => undefined), 60 * 60 * 1000);
  purgeTimer.unref();
  return {
    config,
    clock,
    store,
    keyVerifier,
    pets,
    accounts,
    holderKeys: new HolderKeyService(store, clock),
    metrics,
    readiness,
    limiter,
    logger,
    quotas,
    limits: { policy, clientAddressOf: clientAddressResolver(config.trustProxy) },
    usage,
    tally: {
      count: (request) => tally.count(request),
      onUncounted: () => metrics.usageUncounted.inc(),
      knownPrincipal: (authorization) => keyVerifier.lastKnownPrincipal(authorization),
      onUnattributed: (operation, outcome) => metrics.usageUnattributed.inc({ operation, outcome }),
    },
    usageFlusher,
    async close() {
      clearInterval(purgeTimer);
      readiness.close();
      policy.close();
      // After the listeners closed, before storage does: the last counts are stored, waiting as a request would.
      await usageFlusher.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      await limiter.close();
      await keyVerifier.close().catch(() => undefined);
      await store.close();
    },
  };
}

/** Counts flush in the background (and at close); a flush that fails keeps its counts and warns, throttled. */
function createUsageFlusher(
  tally: UsageTally,
  store: Store,
  clock: Clock,
  config: Config,
  metrics: Metrics,
  logger: Logger,
): UsageFlusher {
  const throttle = new LogThrottle();
  const flusher = new UsageFlusher(tally, store.usage, clock, {
    intervalMs: config.usage.flushMs,
    retentionDays: config.usage.retentionDays,
    purgeAlso: (before) => store.audit.purge(before),
    onFlush: (result, rows) => {
      metrics.usageFlushes.inc({ result });
      metrics.usageFlushedRows.inc(rows);
    },
    onFailure: (error) => {
      const notice = throttle.take();
      if (notice)
        logger.warn(
          { err: error.message, suppressed: notice.suppressed, pending: tally.size },
          'usage counts could not be stored; they are kept for the next flush',
        );
    },
  });
  flusher.start();
  return flusher;
}

/** Loaded on use, like the PostgreSQL store: a single-machine setup (and every CLI command) never loads ioredis. */
async function openRedisLimiter(
  url: string,
  config: Config,
  clock: Clock,
  metrics: Metrics,
  logger: Logger,
): Promise<RedisLimiter> {
  const { RedisLimiter, RedisTopologyError } = await import('./ratelimit/redis-limiter.ts');
  const limiter = new RedisLimiter({
    url,
    cluster: config.redisCluster,
    keyPrefix: config.redisPrefix,
    fallback: new MemoryLimiter({ now: () => clock.now() }),
    onFallback: (error, notice) => {
      metrics.limiterFallbacks.inc();
      if (!notice.log) return;
      const fields = { err: error.message, suppressed: notice.suppressed };
      // Not an outage that passes: the configuration is wrong, and limits stay per instance until it is fixed.
      if (error instanceof RedisTopologyError)
        logger.error(fields, 'Redis is not what REDIS_CLUSTER says: rate limits are counted per instance');
      else logger.warn(fields, 'Redis unreachable: rate limits are counted per instance');
    },
    onRecovered: () => logger.info('Redis reachable again: rate limits are shared'),
  });
  try {
    await limiter.checkTopology();
  } catch (error) {
    await limiter.close();
    throw error;
  }
  return limiter;
}
