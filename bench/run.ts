import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BareResponse } from './bare-server.ts';
import { checkOutBaseline } from './baseline.ts';
import { buildScenarios, measure, POST_BODY, type LoadTarget, type Scenario } from './load.ts';
import { createBenchSchema } from './postgres-schema.ts';
import { cleanEnv, startServer } from './processes.ts';
import { formatScenario, type RunFigures } from './report.ts';
import { startService } from './service.ts';
import { loadSettings, type BenchSettings } from './settings.ts';

/**
 * `npm run bench [-- --baseline <git-ref>]`: the service, and in compare mode an earlier commit's,
 * against a bare node:http server, in interleaved rounds; medians and ratios on stdout (see README.md).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.ts', import.meta.url));
const PETS = 10_000;
const WARMUP_SECONDS = 2;

type CleanUp = () => unknown;

function log(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

async function databaseUrl(settings: BenchSettings, workDir: string, name: string, cleanUps: CleanUp[]) {
  if (settings.databaseUrl === undefined) return `sqlite:${join(workDir, `${name}.db`)}`;
  const schema = await createBenchSchema(settings.databaseUrl);
  cleanUps.push(() => schema.drop());
  return schema.url;
}

/** Starts the bare server with the body the service gave for each scenario's sample request. */
async function startBare(scenarios: readonly Scenario[], service: LoadTarget, cleanUps: CleanUp[]) {
  const responses: BareResponse[] = [];
  for (const scenario of scenarios) {
    const response = await fetch(`${service.url}${scenario.samplePath(service.petIds)}`, {
      method: scenario.method,
      headers: { authorization: `Bearer ${service.key ?? ''}`, 'content-type': 'application/json' },
      body: scenario.method === 'POST' ? POST_BODY : null,
    });
    const body = await response.text();
    if (!response.ok) throw new Error(`${scenario.title}: ${service.name} answered ${response.status}: ${body}`);
    responses.push({ method: scenario.method, pathPrefix: scenario.barePathPrefix, status: response.status, body });
  }
  // Longest prefix first, so that /v1/pets/{id} is not taken for /v1/pets.
  responses.sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
  const env = cleanEnv({ BARE_RESPONSES: JSON.stringify(responses) });
  const bare = await startServer('bare server', ROOT, [BARE_SCRIPT], env);
  cleanUps.push(() => bare.stop());
  return { name: 'bare', url: bare.url, key: undefined, petIds: service.petIds };
}

/** Every target in every round, in an order rotated round by round, so that none is always measured first. */
async function runRounds(settings: BenchSettings, scenarios: readonly Scenario[], targets: readonly LoadTarget[]) {
  const runs = new Map<string, RunFigures[]>();
  const problems: string[] = [];
  for (const scenario of scenarios) {
    for (const target of targets) await measure(target, scenario, settings.connections, WARMUP_SECONDS);
  }
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = targets.map((_, index) => targets[(index + round) % targets.length] as LoadTarget);
    for (const scenario of scenarios) {
      for (const target of order) {
        const result = await measure(target, scenario, settings.connections, settings.durationSeconds);
        const key = `${scenario.name}/${target.name}`;
        runs.set(key, [...(runs.get(key) ?? []), result]);
        problems.push(
          ...result.problems.map((problem) => `round ${round + 1}, ${scenario.name}, ${target.name}: ${problem}`),
        );
        log(
          `round ${round + 1} ${scenario.name} ${target.name}: ${Math.round(result.requestsPerSecond)} req/s, ` +
            `p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms`,
        );
      }
    }
  }
  return { runs, problems };
}

async function bench(settings: BenchSettings, cleanUps: CleanUp[]): Promise<number> {
  const workDir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  cleanUps.push(() => rmSync(workDir, { recursive: true, force: true }));
  const checkouts = [{ name: settings.baseline === undefined ? 'service' : 'current', dir: ROOT }];
  if (settings.baseline !== undefined) {
    const baseline = checkOutBaseline(ROOT, settings.baseline, workDir);
    cleanUps.push(() => baseline.remove());
    checkouts.unshift({ name: 'baseline', dir: baseline.dir });
    log(`baseline ${settings.baseline} is commit ${baseline.commit}`);
  }
  const services: LoadTarget[] = [];
  for (const { name, dir } of checkouts) {
    log(`seeding ${PETS} pets into ${name}`);
    const url = await databaseUrl(settings, workDir, name, cleanUps);
    const started = await startService({
      name,
      checkout: dir,
      databaseUrl: url,
      redisUrl: settings.redisUrl,
      pets: PETS,
    });
    cleanUps.push(() => started.server.stop());
    services.push(started.target);
  }
  const scenarios = buildScenarios(settings.scenarios, PETS);
  const targets = [await startBare(scenarios, services.at(-1) as LoadTarget, cleanUps), ...services];
  const seconds = settings.durationSeconds;
  log(`${settings.rounds} rounds of ${seconds} s per scenario and target, ${settings.connections} connections`);
  const { runs, problems } = await runRounds(settings, scenarios, targets);
  for (const scenario of scenarios) {
    const perTarget = targets.map(({ name }) => ({ target: name, runs: runs.get(`${scenario.name}/${name}`) ?? [] }));
    process.stdout.write(`\n${formatScenario(scenario.title, perTarget)}\n`);
  }
  for (const problem of problems) log(problem);
  return problems.length > 0 ? 1 : 0;
}

async function main(): Promise<number> {
  const cleanUps: CleanUp[] = [];
  let cleaning: Promise<void> | undefined;
  // Last in, first out: servers stop before their schema, worktree and files go.
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const step of cleanUps.reverse())
        await Promise.resolve()
          .then(step)
          .catch((error: unknown) => log(`clean-up: ${error}`));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
  }
  try {
    return await bench(loadSettings(process.argv.slice(2), process.env), cleanUps);
  } catch (error) {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  } finally {
    await cleanUp();
  }
}

process.exitCode = await main();
