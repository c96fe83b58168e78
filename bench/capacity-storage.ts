import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey, generateKeyId, hashApiKey } from '../src/auth/api-key.ts';
import { openStore } from '../src/storage/open-store.ts';
import type { Store } from '../src/domain/store.ts';
import type { UsageCount } from '../src/domain/usage-counts.ts';
import { DEFAULT_TALLY_ENTRIES } from '../src/usage/usage-tally.ts';
import { bucketStart, HOUR_MS, type UsageOperation, type UsageOutcome } from '../src/domain/usage.ts';
import type { CreateRun, FlushBackend, FlushRun, LookupRun, TallyShape } from './capacity-model.ts';
import { freshSchema, log } from './capacity-resources.ts';
import { median } from './report.ts';
import type { CapacitySettings } from './capacity-settings.ts';
import type { CleanUp } from './entry.ts';

/** PG_POOL_SIZE's default: each store opens as an instance does. */
const POOL_SIZE = 10;
const CALLERS_PER_STORE = 32;
/** Callers queued on the lookups' one connection, so that it is never idle. */
const LOOKUP_CALLERS = 16;
const LOOKUP_KEYS = 100;
/** Side-by-side stores of the contended creation run, as instances on one database. */
const STORES_SIDE_BY_SIDE = 4;
const FLUSH_REPEATS = 3;
const OPERATIONS: readonly UsageOperation[] = ['listPets', 'getPet', 'createPet'];
const OUTCOMES: readonly UsageOutcome[] = ['2xx', '4xx'];
const KEYS_PER_ACCOUNT = 2;

async function openMigrated(databaseUrl: string, pgPoolSize = POOL_SIZE): Promise<Store> {
  const store = await openStore({ databaseUrl, pgPoolSize, storageTimeoutMs: 10_000 });
  await store.migrate();
  return store;
}

/**
 * Calls `work` from `callers` loops for `seconds`; counts the calls that ended inside the window.
 * A failed call counts as a problem, not a call.
 */
async function callFor(seconds: number, callers: number, work: () => Promise<unknown>) {
  const started = performance.now();
  const end = started + seconds * 1000;
  let [calls, failures, firstFailure] = [0, 0, undefined as string | undefined];
  const caller = async (): Promise<void> => {
    while (performance.now() < end) {
      try {
        await work();
        if (performance.now() <= end) calls += 1;
      } catch (error) {
        failures += 1;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  const problems = failures > 0 ? [`${failures} calls failed (first: ${firstFailure})`] : [];
  return { perSecond: calls / seconds, problems };
}

/**
 * PostgreSQL through the store's own code: creations (group commit and its lock included) from one
 * store and from several side by side on one schema, as instances sharing a database; and API key
 * lookups, the read each instance makes once per key and cache period, on one busy connection.
 */
export async function measurePostgres(settings: CapacitySettings, cleanUps: CleanUp[]) {
  const databaseUrl = await freshSchema(settings.databaseUrl, cleanUps);
  const seconds = Math.max(1, settings.durationSeconds / 2);
  const creates: CreateRun[] = [];
  const problems: string[] = [];
  const stores: Store[] = [];
  try {
    for (let index = 0; index < STORES_SIDE_BY_SIDE; index += 1) stores.push(await openMigrated(databaseUrl));
    for (const count of [1, STORES_SIDE_BY_SIDE]) {
      const callers = stores
        .slice(0, count)
        .map((store) =>
          callFor(seconds, CALLERS_PER_STORE, () =>
            store.pets.create({ name: 'Capacity', categoryId: 42n, status: 'available' }, Date.now()),
          ),
        );
      const results = await Promise.all(callers);
      const createsPerSecond = results.reduce((sum, result) => sum + result.perSecond, 0);
      creates.push({ stores: count, callers: count * CALLERS_PER_STORE, createsPerSecond });
      problems.push(...results.flatMap((result) => result.problems.map((problem) => `creations: ${problem}`)));
      log(`postgres: ${count} store(s): ${createsPerSecond.toFixed(0)} creations/s`);
    }
    stores.push(await openMigrated(databaseUrl, 1));
    const lookups = await measureLookups(stores.at(-1) as Store, seconds);
    problems.push(...lookups.problems);
    return { creates, lookups: [lookups.run], problems };
  } finally {
    for (const store of stores) await store.close();
  }
}

async function measureLookups(store: Store, seconds: number) {
  const account = await store.accounts.create({ name: 'capacity', plan: 'pro', perMinute: null, perDay: null }, 0);
  const hashes: string[] = [];
  for (let index = 0; index < LOOKUP_KEYS; index += 1) {
    const hash = hashApiKey(generateApiKey());
    await store.keys.create({ id: generateKeyId(), accountId: account.id, hash, expiresAt: null }, Date.now());
    hashes.push(hash);
  }
  const result = await callFor(seconds, LOOKUP_CALLERS, async () => {
    const found = await store.keys.findPrincipalByHash(hashes[Math.floor(Math.random() * hashes.length)] as string);
    if (found === undefined) throw new Error('a stored key was not found');
  });
  log(`postgres: ${result.perSecond.toFixed(0)} key lookups/s on one connection`);
  const run: LookupRun = { connections: 1, callers: LOOKUP_CALLERS, lookupsPerSecond: result.perSecond };
  return { run, problems: result.problems.map((problem) => `key lookups: ${problem}`) };
}

export function tallyShape(accounts: number): TallyShape {
  return { accounts, keysPerAccount: KEYS_PER_ACCOUNT, operations: OPERATIONS.length, outcomes: OUTCOMES.length };
}

/** One flush interval's counts of this hour: every key of `shape`, or `rows` of them when given. */
export function tallyCounts(shape: TallyShape, now: number, rows?: number): UsageCount[] {
  const hour = bucketStart(now, HOUR_MS);
  const counts: UsageCount[] = [];
  const total = rows ?? shape.accounts * shape.keysPerAccount * shape.operations * shape.outcomes;
  for (let index = 0; counts.length < total; index += 1) {
    const key = Math.floor(index / (OPERATIONS.length * OUTCOMES.length));
    const operation = OPERATIONS[index % OPERATIONS.length] as UsageOperation;
    const outcome = OUTCOMES[Math.floor(index / OPERATIONS.length) % OUTCOMES.length] as UsageOutcome;
    const accountId = Math.floor(key / shape.keysPerAccount) + 1;
    counts.push({ accountId, keyId: `key_${key}`, operation, outcome, hour, count: 1 + (index % 50), lastAt: now });
  }
  return counts;
}

/** One flush as the flusher makes it: usage.add of the whole tally, waiting for storage as the last flush does. */
async function timeFlush(store: Store, counts: readonly UsageCount[]) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  if (!(await store.usage.add(counts, 'waiting'))) throw new Error('the usage flush was not written');
  const wallMs = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (user + system) / 1000 };
}

/**
 * The usage flush on each backend: the typical tally (the first flush of the hour inserts, the
 * next ones add to the same rows, as every later flush of the hour does), then the tally at its
 * bound of entries, once.
 */
export async function measureFlush(backend: FlushBackend, settings: CapacitySettings, cleanUps: CleanUp[]) {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-capacity-'));
  const store = await openMigrated(
    backend === 'sqlite' ? `sqlite:${join(dir, 'petstore.db')}` : await freshSchema(settings.databaseUrl, cleanUps),
  );
  try {
    const shape = tallyShape(settings.tallyAccounts);
    const typical = tallyCounts(shape, Date.now());
    const repeats: { wallMs: number; cpuMs: number }[] = [];
    for (let index = 0; index < FLUSH_REPEATS; index += 1) repeats.push(await timeFlush(store, typical));
    const bound = await timeFlush(store, tallyCounts(shape, Date.now() + HOUR_MS, DEFAULT_TALLY_ENTRIES));
    const runs: FlushRun[] = [
      {
        backend,
        tally: 'typical',
        rows: typical.length,
        wallMs: median(repeats.map((flush) => flush.wallMs)),
        cpuMs: median(repeats.map((flush) => flush.cpuMs)),
      },
      { backend, tally: 'bound', rows: DEFAULT_TALLY_ENTRIES, ...bound },
    ];
    for (const run of runs) log(`flush ${backend}: ${run.rows} rows in ${run.wallMs.toFixed(0)} ms`);
    return runs;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
