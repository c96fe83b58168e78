import { AccountService } from './auth/account-service.ts';
import { KeyVerifier } from './auth/key-verifier.ts';
import { systemClock, type Clock } from './clock.ts';
import { GET_PET_SUNSET, type Config } from './config.ts';
import type { AppDependencies } from './http/build-app.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import type { ReadinessCheck } from './http/ops-routes.ts';
import { PetService } from './pets/pet-service.ts';
import { openStore } from './storage/open-store.ts';
import type { Store } from './storage/store.ts';

/** Everything the HTTP app and the CLI run on, built once from the configuration. */
export interface Services extends AppDependencies {
  readonly store: Store;
  readonly accounts: AccountService;
  readonly metrics: Metrics;
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly clock?: Clock;
  /** Process metrics (CPU, heap) only make sense once per process. */
  readonly collectProcessMetrics?: boolean;
}

export async function buildServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const store = await openStore(config);
  const metrics = createMetrics({ collectProcessMetrics: options.collectProcessMetrics ?? false });
  const keyVerifier = new KeyVerifier(store.keys, clock, { ttlMs: config.keyCacheTtlMs });
  const pets = new PetService(store, clock, { deprecatedAt: config.deprecationDate, sunsetAt: GET_PET_SUNSET });
  const accounts = new AccountService(store, clock);
  const readiness: ReadinessCheck[] = [{ name: store.backend, check: () => store.ping() }];
  const purgeTimer = setInterval(() => void pets.purgeIdempotencyKeys().catch(() => undefined), 60 * 60 * 1000);
  purgeTimer.unref();
  return {
    config,
    clock,
    store,
    keyVerifier,
    pets,
    accounts,
    metrics,
    readiness,
    async close() {
      clearInterval(purgeTimer);
      await keyVerifier.close().catch(() => undefined);
      await store.close();
    },
  };
}
