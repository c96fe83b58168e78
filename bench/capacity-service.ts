import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScenarioFigures, ServiceFigures } from './capacity-model.ts';
import { freshRedisPrefix, freshSchema, log } from './capacity-resources.ts';
import type { CapacitySettings } from './capacity-settings.ts';
import { buildScenarios, measure } from './load.ts';
import { seedPets, startService } from './servers.ts';
import { CAPACITY_SCENARIO_NAMES, type CapacityScenarioName } from './settings.ts';
import type { CleanUp } from './entry.ts';

const ROOT = join(import.meta.dirname, '..');
const WARMUP_SECONDS = 2;

export type ServiceBackend = 'embedded' | 'postgres';

/**
 * One instance of the service, set up as `npm run bench` does (CLI, `start` script, pets over HTTP),
 * loaded with each of its scenarios in turn: embedded is SQLite with the in-memory limiter,
 * postgres is PostgreSQL and Redis, each with a schema and a key prefix of its own.
 */
export async function measureService(backend: ServiceBackend, settings: CapacitySettings, cleanUps: CleanUp[]) {
  const steps: CleanUp[] = [];
  try {
    const [databaseUrl, redisUrl, redisPrefix] =
      backend === 'embedded'
        ? [sqliteUrl(steps), undefined, undefined]
        : [
            await freshSchema(settings.databaseUrl, cleanUps),
            settings.redisUrl,
            freshRedisPrefix(settings.redisUrl, cleanUps),
          ];
    const { server, key } = await startService(backend, ROOT, databaseUrl, redisUrl, redisPrefix);
    steps.push(() => server.stop());
    log(`${backend}: seeding ${settings.pets} pets`);
    const target = { name: backend, url: server.url, key, petIds: await seedPets(server.url, key, settings.pets) };
    const figures: Partial<Record<CapacityScenarioName, ScenarioFigures>> = {};
    const problems: string[] = [];
    for (const scenario of buildScenarios(CAPACITY_SCENARIO_NAMES, settings.pets)) {
      await measure(target, scenario, settings.connections, WARMUP_SECONDS);
      const result = await measure(target, scenario, settings.connections, settings.durationSeconds);
      const { requestsPerSecond, p50Ms, p99Ms } = result;
      figures[scenario.name] = { requestsPerSecond, p50Ms, p99Ms };
      problems.push(...result.problems.map((problem) => `${backend} ${scenario.name}: ${problem}`));
      log(`${backend} ${scenario.name}: ${requestsPerSecond.toFixed(0)} req/s, p99 ${p99Ms.toFixed(2)} ms`);
    }
    return { figures: figures as ServiceFigures, problems };
  } finally {
    // The server stops now, so that it takes no CPU from the parts measured after it.
    for (const step of steps.reverse()) await step();
  }
}

function sqliteUrl(steps: CleanUp[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-capacity-'));
  steps.push(() => rmSync(dir, { recursive: true, force: true }));
  return `sqlite:${join(dir, 'petstore.db')}`;
}
