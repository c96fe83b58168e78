import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { measureLimiter } from './capacity-limiter.ts';
import {
  assumptionsFrom,
  sizingInputs,
  sizingTable,
  type CapacityFigures,
  type FlushRun,
  type LimiterRun,
  type Machine,
  type ServiceFigures,
} from './capacity-model.ts';
import { renderReport } from './capacity-report.ts';
import { log, postgresFacts } from './capacity-resources.ts';
import { measureService, type ServiceBackend } from './capacity-service.ts';
import { loadCapacitySettings, type CapacityPart, type CapacitySettings } from './capacity-settings.ts';
import { measureFlush, measurePostgres, tallyShape } from './capacity-storage.ts';
import { runEntry, type CleanUp } from './entry.ts';

/**
 * `npm run bench:capacity [-- --json <file>] [-- --markdown] [-- --from <file>]`: what one instance,
 * one Redis shard and one PostgreSQL take on this machine, and the sizing that follows. See README.md.
 */

function cpuModel(): string {
  try {
    const line = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
    if (line !== undefined) return line.trim();
  } catch {
    // Not Linux: the model as Node reports it.
  }
  return cpus()[0]?.model.trim() || 'unknown CPU';
}

async function measureAll(settings: CapacitySettings, cleanUps: CleanUp[]) {
  const problems: string[] = [];
  const wants = (part: CapacityPart) => settings.parts.includes(part);
  const service: Partial<Record<ServiceBackend, ServiceFigures>> = {};
  if (wants('service')) {
    for (const backend of ['embedded', 'postgres'] as const) {
      const result = await measureService(backend, settings, cleanUps);
      service[backend] = result.figures;
      problems.push(...result.problems);
    }
  }
  let [limiter, redisVersion] = [[] as LimiterRun[], undefined as string | undefined];
  if (wants('limiter')) {
    const result = await measureLimiter(settings, cleanUps);
    [limiter, redisVersion] = [result.runs, result.redisVersion];
    problems.push(...result.problems);
  }
  const pg = wants('postgres') ? await measurePostgres(settings, cleanUps) : { creates: [], lookups: [], problems: [] };
  problems.push(...pg.problems);
  const flushes: FlushRun[] = [];
  if (wants('flush')) {
    for (const backend of ['sqlite', 'postgres'] as const)
      flushes.push(...(await measureFlush(backend, settings, cleanUps)));
  }
  const usesPostgres = settings.parts.some((part) => part !== 'limiter');
  const facts = usesPostgres ? await postgresFacts(settings.databaseUrl) : undefined;
  const machine: Machine = {
    date: new Date().toISOString().slice(0, 10),
    cores: availableParallelism(),
    cpuModel: cpuModel(),
    node: process.version,
    postgres: facts?.version,
    redis: redisVersion,
  };
  const figures: CapacityFigures = {
    machine,
    durationSeconds: settings.durationSeconds,
    connections: settings.connections,
    service,
    limiter,
    creates: pg.creates,
    lookups: pg.lookups,
    tally: tallyShape(settings.tallyAccounts),
    flushes,
    pgAvailableConnections: facts?.availableConnections,
  };
  return { figures, problems };
}

/** What `--json` saves: the figures, and the sizing as this run's assumptions made it. */
function saved(figures: CapacityFigures) {
  const assumptions = assumptionsFrom(process.env);
  const inputs = sizingInputs(figures, assumptions.writeShare);
  const sizing = 'missing' in inputs ? undefined : sizingTable(inputs, assumptions);
  return { figures, assumptions, inputs, sizing };
}

async function capacity(settings: CapacitySettings, cleanUps: CleanUp[]): Promise<number> {
  const assumptions = assumptionsFrom(process.env);
  if (settings.from !== undefined) {
    const { figures } = JSON.parse(readFileSync(settings.from, 'utf8')) as { figures: CapacityFigures };
    process.stdout.write(renderReport(figures, assumptions, settings.markdown));
    return 0;
  }
  const started = performance.now();
  const { figures, problems } = await measureAll(settings, cleanUps);
  log(`measured in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  if (settings.json !== undefined) writeFileSync(settings.json, `${JSON.stringify(saved(figures), null, 2)}\n`);
  process.stdout.write(renderReport(figures, assumptions, settings.markdown));
  for (const problem of problems) log(problem);
  return problems.length > 0 ? 1 : 0;
}

await runEntry((cleanUps) => capacity(loadCapacitySettings(process.argv.slice(2), process.env), cleanUps), log);
