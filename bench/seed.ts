import { buildServices } from '../src/composition-root.ts';
import { loadConfig } from '../src/config.ts';
import { PET_STATUSES, type NewPetRecord } from '../src/storage/store.ts';

export interface SeedOptions {
  readonly databaseUrl: string;
  readonly redisUrl: string | undefined;
  readonly pets: number;
  /** Creations handed to the store at once; SQLite commits each such group in one transaction. */
  readonly batchSize: number;
}

export interface Seeded {
  readonly accountName: string;
  /** The plaintext API key of the benchmark account. */
  readonly key: string;
  readonly firstPetId: number;
  readonly lastPetId: number;
  readonly seconds: number;
}

/** Effectively unlimited, so that rate limiting never throttles the benchmark. */
export const BENCH_LIMIT = 1_000_000_000;

/**
 * Migrates the store, creates an enterprise account with a key, and adds `pets` pets, all through
 * the service's own code (buildServices), so it works on whichever backend DATABASE_URL names.
 */
export async function seed(options: SeedOptions): Promise<Seeded> {
  const started = performance.now();
  const config = loadConfig({
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    LOG_LEVEL: 'silent',
    DEMO_BOOTSTRAP: 'false',
  });
  const services = await buildServices(config);
  try {
    await services.store.migrate();
    // Unique per run: a shared database (PostgreSQL) keeps the accounts of earlier runs.
    const accountName = `bench-${Date.now()}-${process.pid}`;
    await services.accounts.createAccount(accountName, {
      plan: 'enterprise',
      perMinute: BENCH_LIMIT,
      perDay: BENCH_LIMIT,
    });
    const { key } = await services.accounts.createKey(accountName);
    const now = Date.now();
    let firstPetId = Number.POSITIVE_INFINITY;
    let lastPetId = 0;
    for (let start = 0; start < options.pets; start += options.batchSize) {
      const batch: Array<Promise<{ id: number }>> = [];
      for (let i = start; i < Math.min(start + options.batchSize, options.pets); i += 1)
        batch.push(services.store.pets.create(petNumber(i), now));
      for (const pet of await Promise.all(batch)) {
        firstPetId = Math.min(firstPetId, pet.id);
        lastPetId = Math.max(lastPetId, pet.id);
      }
    }
    if (lastPetId === 0) throw new Error('no pets were seeded (BENCH_PETS must be at least 1)');
    return { accountName, key, firstPetId, lastPetId, seconds: (performance.now() - started) / 1000 };
  } finally {
    await services.close();
  }
}

function petNumber(i: number): NewPetRecord {
  return { name: `Pet ${i + 1}`, categoryId: BigInt(i % 100), status: PET_STATUSES[i % PET_STATUSES.length] ?? null };
}
