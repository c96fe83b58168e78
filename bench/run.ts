import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BareResponse } from './bare-server.ts';
import { freePort, pinProcess, startChildServer, waitUntilReady, type ChildServer } from './child-process.ts';
import { dedicatedCpus, measureLimitsCost } from './limits-cost.ts';
import { measure, type LoadSettings, type RunFigures } from './measure.ts';
import {
  formatLimitsCost,
  formatTable,
  summarizeLimitsCost,
  summarizeScenario,
  type LimitsCost,
  type ScenarioSummary,
} from './report.ts';
import { buildScenarios, type Scenario, type ScenarioName } from './scenarios.ts';
import { seed } from './seed.ts';
import { benchDatabase } from './postgres-schema.ts';
import { loadSettings, serviceVariableNames, SettingsError, type BenchSettings } from './settings.ts';

/**
 * `npm run bench`: the service (a child process, on a freshly seeded store) against a bare
 * node:http server sending bodies of the same size, scenario by scenario, alternating, for a few
 * rounds; medians, the ratio service/bare and its target, printed and written to
 * bench/results/latest.json. Exits 1 when any response was not 2xx or a connection failed.
 *
 *   BENCH_DURATION=10 BENCH_WARMUP=2 BENCH_CONNECTIONS=50 BENCH_ROUNDS=3 BENCH_PETS=10000
 *   BENCH_SCENARIOS=list,get,post     a subset, e.g. while profiling
 *   BENCH_LOG_LEVEL=info              the service's LOG_LEVEL
 *   BENCH_DATABASE_URL, BENCH_REDIS_URL   another backend (default: a temporary SQLite file); on
 *                                     PostgreSQL the run uses a schema of its own, dropped at the end
 *   BENCH_SERVICE_<NAME>=value        any other service setting, e.g. BENCH_SERVICE_PG_POOL_SIZE=20
 *   BENCH_LIMITS_COST=0               skip the last phase: the service against itself without its limits
 *                                     step, both loaded at once, in BENCH_LIMITS_INVOCATIONS=10 fresh pairs of
 *                                     processes, BENCH_LIMITS_RUNS=1 run of BENCH_LIMITS_SECONDS=4 per scenario
 *                                     each, after BENCH_LIMITS_WARMUP=8 s of load on a fresh pair (BENCH_WARMUP
 *                                     before later scenarios); servers and load generator on CPUs of their own
 *                                     unless BENCH_LIMITS_PINNED=0
 *   BENCH_LIMITS_AA=1                 calibrate that phase: both sides without limits (the cost shown is its error)
 *   BENCH_CPU_PROF_DIR=dir            run the service under --cpu-prof
 *   BENCH_SERVER_CPUS, BENCH_LOADGEN_CPUS   pin the servers / this process (taskset CPU lists)
 */
const HOST = '127.0.0.1';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_SCRIPT = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.ts', import.meta.url));
const UNLIMITED_SCRIPT = fileURLToPath(new URL('./service-without-limits.ts', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

type TargetName = 'service' | 'bare';

/** Most acceptable share of throughput the limits step may cost (issue #3). */
const LIMITS_COST_TARGET = 0.1;

/** CPU used by anything but the benchmark's own processes, above which a run counts as disturbed. */
const NOISY_OTHERS_PERCENT = 25;

interface Sample {
  readonly scenario: Scenario;
  readonly statusCode: number;
  readonly body: string;
}

/** A consistent copy of a SQLite database (VACUUM INTO reads one snapshot), as a sqlite: URL. */
function copySqlite(databaseUrl: string, path: string): string {
  const database = new DatabaseSync(databaseUrl.slice('sqlite:'.length));
  try {
    database.prepare('VACUUM INTO ?').run(path);
  } finally {
    database.close();
  }
  return `sqlite:${path}`;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The caller's environment without the service's own variables, so a stray PORT or DATABASE_URL cannot leak in. */
function inheritedEnv(): NodeJS.ProcessEnv {
  const excluded = new Set(serviceVariableNames());
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !excluded.has(name)));
}

interface ServiceStart {
  readonly databaseUrl: string;
  readonly variant: 'service' | 'unlimited';
  /** Its stdout (the access log), in the work directory. */
  readonly logName: string;
  readonly cpus: string | undefined;
}

async function startService(
  settings: BenchSettings,
  workDir: string,
  { databaseUrl, variant, logName, cpus }: ServiceStart,
): Promise<ChildServer> {
  const port = await freePort(HOST);
  const profiling =
    settings.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`];
  const env: NodeJS.ProcessEnv = {
    ...inheritedEnv(),
    ...settings.serviceEnv,
    PORT: String(port),
    HOST,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: settings.logLevel,
    DEMO_BOOTSTRAP: 'false',
  };
  if (settings.redisUrl !== undefined) env['REDIS_URL'] = settings.redisUrl;
  const [name, script] =
    variant === 'service' ? ['service', SERVER_SCRIPT] : ['service without limits', UNLIMITED_SCRIPT];
  const server = startChildServer({
    name,
    args: [...profiling, script],
    env,
    host: HOST,
    port,
    stdoutFile: join(workDir, logName),
    cpus,
  });
  await waitUntilReady(server, '/healthz');
  return server;
}

async function startBare(samples: readonly Sample[], workDir: string, cpus: string | undefined): Promise<ChildServer> {
  const port = await freePort(HOST);
  const responses: BareResponse[] = samples
    .map(({ scenario, statusCode, body }) => ({
      method: scenario.method,
      pathPrefix: scenario.barePathPrefix,
      statusCode,
      body,
    }))
    // Longest prefix first, so /v1/pets/{id} is not taken for /v1/pets.
    .sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
  const file = join(workDir, 'bare-responses.json');
  writeFileSync(file, JSON.stringify(responses));
  const env = { ...inheritedEnv(), PORT: String(port), HOST, BARE_RESPONSES: file };
  const server = startChildServer({
    name: 'bare server',
    args: [BARE_SCRIPT],
    env,
    host: HOST,
    port,
    stdoutFile: join(workDir, 'bare.log'),
    cpus,
  });
  await waitUntilReady(server, '/healthz');
  return server;
}

/** One real answer of the service per scenario: proof that it works, and the body the bare server mirrors. */
async function fetchSample(
  service: ChildServer,
  scenario: Scenario,
  headers: Readonly<Record<string, string>>,
): Promise<Sample> {
  const response = await fetch(`${service.url}${scenario.samplePath}`, {
    method: scenario.method,
    headers: scenario.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: scenario.body ?? null,
  });
  const body = await response.text();
  if (response.status < 200 || response.status > 299) {
    throw new Error(`${scenario.title}: the service answered ${response.status}: ${body}`);
  }
  return { scenario, statusCode: response.status, body };
}

function problemsOf(round: number, scenario: Scenario, target: string, figures: RunFigures, phase: string): string[] {
  const problems: string[] = [];
  if (figures.non2xx > 0)
    problems.push(`${figures.non2xx} non-2xx responses (status codes: ${JSON.stringify(figures.statusCodes)})`);
  if (figures.errors > 0) problems.push(`${figures.errors} connection errors`);
  if (figures.timeouts > 0) problems.push(`${figures.timeouts} timeouts`);
  if (figures.responses === 0) problems.push('no responses');
  return problems.map(
    (problem) =>
      `${phase === 'limits phase' ? 'run' : 'round'} ${round}, ${scenario.title}, ${target} (${phase}): ${problem}`,
  );
}

function describe(figures: RunFigures): string {
  const cpu = figures.targetCpuPercent === undefined ? '' : `, target CPU ${Math.round(figures.targetCpuPercent)}%`;
  const others = figures.otherCpuPercent === undefined ? '' : `, others ${Math.round(figures.otherCpuPercent)}%`;
  const steal =
    figures.stealCpuPercent === undefined || figures.stealCpuPercent < 1
      ? ''
      : `, steal ${Math.round(figures.stealCpuPercent)}%`;
  return (
    `${Math.round(figures.requestsPerSecond)} req/s, p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms` +
    `${cpu}, load generator CPU ${Math.round(figures.loadGeneratorCpuPercent)}%${others}${steal}` +
    (figures.non2xx > 0 ? `, ${figures.non2xx} non-2xx` : '')
  );
}

/** The end of a possibly large log file. */
function tailOf(path: string, bytes = 4096): string {
  try {
    const size = statSync(path).size;
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(bytes, size));
      readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      return buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

interface LimitsPhaseContext {
  readonly settings: BenchSettings;
  readonly workDir: string;
  readonly databaseUrl: string;
  readonly backend: 'sqlite' | 'postgres';
  readonly cpuCount: number;
  /** The main phase's placement, kept when the phase cannot or may not pin. */
  readonly placement: string;
  readonly scenarios: readonly Scenario[];
  readonly headers: Readonly<Record<string, string>>;
  /** Where started processes are registered for clean-up, and problems reported. */
  readonly children: ChildServer[];
  readonly problems: string[];
}

interface LimitsPhase {
  readonly costs: LimitsCost[];
  readonly placement: string;
}

/** The last phase: the service against itself without its limits step (see limits-cost.ts). */
async function runLimitsPhase(context: LimitsPhaseContext): Promise<LimitsPhase> {
  const { settings, workDir, databaseUrl, backend, scenarios, children, problems } = context;
  const ownCpus =
    settings.limitsPinned && settings.serverCpus === undefined && settings.loadGeneratorCpus === undefined
      ? dedicatedCpus(context.cpuCount)
      : undefined;
  let placement = context.placement;
  if (ownCpus !== undefined) {
    pinProcess(ownCpus.loadGenerator);
    placement = `servers on CPU ${ownCpus.servers}, load generator on CPU ${ownCpus.loadGenerator}`;
  }
  if (settings.limitsCalibration) placement += '; A/A CALIBRATION: both sides without limits';
  log(`bench: limits phase, CPU placement: ${placement}`);
  const cpus = ownCpus?.servers ?? settings.serverCpus;
  // On SQLite each variant gets its own copy, so their writes do not wait on each other's locks.
  const copyFor = (name: string): string =>
    backend === 'sqlite' ? copySqlite(databaseUrl, join(workDir, `limits-${name}.db`)) : databaseUrl;
  const urls = { service: copyFor('service'), unlimited: copyFor('unlimited') };
  const paired = await measureLimitsCost({
    startPair: async () => {
      const pair = await Promise.all([
        startService(settings, workDir, {
          databaseUrl: urls.service,
          variant: settings.limitsCalibration ? 'unlimited' : 'service',
          logName: 'limits-service.log',
          cpus,
        }),
        startService(settings, workDir, {
          databaseUrl: urls.unlimited,
          variant: 'unlimited',
          logName: 'limits-unlimited.log',
          cpus,
        }),
      ]);
      children.push(...pair);
      return { service: pair[0], unlimited: pair[1] };
    },
    scenarios,
    load: { connections: settings.connections, seconds: settings.limitsSeconds, headers: context.headers },
    invocations: settings.limitsInvocations,
    runsPerInvocation: settings.limitsRuns,
    seconds: settings.limitsSeconds,
    startWarmupSeconds: settings.limitsWarmupSeconds,
    warmupSeconds: settings.warmupSeconds,
    onRun: (scenario, invocation, run, withLimits, without) => {
      const index = (invocation - 1) * settings.limitsRuns + run;
      problems.push(...problemsOf(index, scenario, 'service', withLimits, 'limits phase'));
      problems.push(...problemsOf(index, scenario, 'service without limits', without, 'limits phase'));
      const cost = 1 - withLimits.requestsPerSecond / without.requestsPerSecond;
      log(
        `limits ${invocation}.${run}  ${scenario.title.padEnd(22)} cost ${(cost * 100).toFixed(1).padStart(5)}%  ` +
          `with: ${describe(withLimits)}  without: ${describe(without)}`,
      );
    },
  });
  const costs = scenarios.map((scenario) => {
    const runs = paired.get(scenario.name) ?? { service: [], unlimited: [] };
    return summarizeLimitsCost(scenario, runs.service, runs.unlimited, LIMITS_COST_TARGET);
  });
  return { costs, placement };
}

async function main(): Promise<number> {
  let settings: BenchSettings;
  try {
    settings = loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      log(`bench: ${error.message}`);
      return 2;
    }
    throw error;
  }

  // Before any pinning, which would shrink it.
  const cpuCount = availableParallelism();
  const workDir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  const postgres = settings.databaseUrl?.startsWith('postgres') ? await benchDatabase(settings.databaseUrl) : undefined;
  const databaseUrl = postgres?.url ?? settings.databaseUrl ?? `sqlite:${join(workDir, 'bench.db')}`;
  const children: ChildServer[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanUp = (): Promise<void> => {
    cleaned ??= (async () => {
      await Promise.all(children.map((child) => child.stop().catch(() => undefined)));
      await postgres
        ?.drop()
        .catch((error: unknown) => log(`bench: could not drop the benchmark schema: ${String(error)}`));
      rmSync(workDir, { recursive: true, force: true });
    })();
    return cleaned;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`bench: ${signal}, stopping`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const backend = databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
    log(
      `bench: seeding ${settings.pets} pets into ${settings.databaseUrl === undefined ? 'a temporary SQLite database' : databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}`,
    );
    const seeded = await seed({ databaseUrl, redisUrl: settings.redisUrl, pets: settings.pets, batchSize: 1000 });
    log(
      `bench: seeded pets ${seeded.firstPetId}..${seeded.lastPetId} and account ${seeded.accountName} (enterprise) in ${seeded.seconds.toFixed(1)} s`,
    );

    const service = await startService(settings, workDir, {
      databaseUrl,
      variant: 'service',
      logName: 'service.log',
      cpus: settings.serverCpus,
    });
    children.push(service);
    log(`bench: service ready at ${service.url} (pid ${service.pid}, LOG_LEVEL=${settings.logLevel})`);

    const headers = { authorization: `Bearer ${seeded.key}` };
    const scenarios = buildScenarios(settings.scenarios, { first: seeded.firstPetId, last: seeded.lastPetId });
    const samples: Sample[] = [];
    for (const scenario of scenarios) samples.push(await fetchSample(service, scenario, headers));

    const bare = await startBare(samples, workDir, settings.serverCpus);
    children.push(bare);
    log(`bench: bare server ready at ${bare.url} (pid ${bare.pid})`);

    // Only now: seeding and start-up may use every CPU.
    if (settings.loadGeneratorCpus !== undefined) pinProcess(settings.loadGeneratorCpus);
    const placement =
      settings.serverCpus === undefined && settings.loadGeneratorCpus === undefined
        ? 'scheduler'
        : `servers on CPU ${settings.serverCpus ?? 'any'}, load generator on CPU ${settings.loadGeneratorCpus ?? 'any'}`;
    log(`bench: CPU placement: ${placement}`);
    const targets: Record<TargetName, ChildServer> = { service, bare };
    const targetNames = Object.keys(targets) as TargetName[];
    const runs = new Map<ScenarioName, Record<TargetName, RunFigures[]>>(
      scenarios.map((scenario) => [scenario.name, { service: [], bare: [] }]),
    );
    const problems: string[] = [];
    const measured: LoadSettings = { connections: settings.connections, seconds: settings.durationSeconds, headers };
    const warmup: LoadSettings = { ...measured, seconds: settings.warmupSeconds };

    for (let round = 1; round <= settings.rounds; round += 1) {
      // Rotate who goes first, so no target always runs on a machine another just heated.
      const shift = (round - 1) % targetNames.length;
      const order = [...targetNames.slice(shift), ...targetNames.slice(0, shift)];
      for (const scenario of scenarios) {
        for (const targetName of order) {
          const target = targets[targetName];
          if (settings.warmupSeconds > 0) {
            const warm = await measure(target.url, target.pid, scenario, warmup);
            problems.push(...problemsOf(round, scenario, targetName, warm, 'warm-up'));
          }
          const figures = await measure(target.url, target.pid, scenario, measured);
          problems.push(...problemsOf(round, scenario, targetName, figures, 'measured'));
          const exit = target.exitCode();
          if (exit !== undefined) {
            throw new Error(
              `${target.name} exited with code ${String(exit)} during the benchmark (0: it was sent SIGTERM or SIGINT by someone)\n` +
                `stderr:\n${target.stderrTail()}\nend of stdout:\n${tailOf(target.stdoutFile, 1024)}`,
            );
          }
          runs.get(scenario.name)?.[targetName].push(figures);
          log(
            `round ${round}/${settings.rounds}  ${scenario.title.padEnd(22)} ${targetName.padEnd(7)} ${describe(figures)}`,
          );
        }
      }
    }

    let limits: LimitsPhase | undefined;
    if (settings.limitsCost) {
      // The main phase's servers sit idle from here on; stopping them keeps the machine quiet.
      await Promise.all([service.stop(), bare.stop()]);
      limits = await runLimitsPhase({
        settings,
        workDir,
        databaseUrl,
        backend,
        cpuCount,
        placement,
        scenarios,
        headers,
        children,
        problems,
      });
    }

    const summaries: ScenarioSummary[] = samples.map((sample) => {
      const figures = runs.get(sample.scenario.name) ?? { service: [], bare: [] };
      return summarizeScenario(sample.scenario, Buffer.byteLength(sample.body), figures.service, figures.bare);
    });

    const serviceLogBytes = statSync(join(workDir, 'service.log')).size;
    process.stdout.write(
      `\npetstore benchmark: ${backend}${settings.redisUrl === undefined ? '' : ' + redis'}, ${settings.connections} connections, ` +
        `${settings.durationSeconds} s per run after ${settings.warmupSeconds} s warm-up, median of ${settings.rounds} round(s), ` +
        `LOG_LEVEL=${settings.logLevel}, node ${process.version}, ${cpuCount} CPU(s), CPU placement: ${placement}\n\n` +
        `${formatTable(summaries)}\n`,
    );
    if (limits !== undefined) process.stdout.write(`\n${formatLimitsCost(limits.costs, limits.placement)}\n`);
    // PostgreSQL and Redis on this machine count as "others" while the service runs; only the bare runs tell of a neighbour then.
    const externalStores = backend !== 'sqlite' || settings.redisUrl !== undefined;
    const othersDuring = (summary: ScenarioSummary): number =>
      Math.max(externalStores ? 0 : (summary.service.maxOtherCpuPercent ?? 0), summary.bare.maxOtherCpuPercent ?? 0);
    const noisy = summaries.filter((summary) => othersDuring(summary) > NOISY_OTHERS_PERCENT);
    if (externalStores) {
      process.stdout.write(
        '\n"others" during the service runs includes PostgreSQL/Redis when they run on this machine.\n',
      );
    }
    if (noisy.length > 0) {
      process.stdout.write(
        `\nNOTE: something else used more than ${NOISY_OTHERS_PERCENT}% of a core during ${noisy.map((summary) => summary.title).join(', ')}; ` +
          'those figures are unreliable. Run again on a quiet machine.\n',
      );
    }
    if (problems.length > 0) {
      process.stdout.write(`\nERRORS (${problems.length}):\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
      process.stdout.write(
        `\nservice stderr:\n${service.stderrTail() || '(empty)'}\nend of service log:\n${tailOf(join(workDir, 'service.log'))}\n`,
      );
    }

    mkdirSync(RESULTS_DIR, { recursive: true });
    const resultsFile = join(RESULTS_DIR, 'latest.json');
    const results = {
      finishedAt: new Date().toISOString(),
      commit: gitCommit(),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: { count: cpuCount, model: cpus()[0]?.model },
      backend,
      redis: settings.redisUrl !== undefined,
      settings: {
        durationSeconds: settings.durationSeconds,
        warmupSeconds: settings.warmupSeconds,
        connections: settings.connections,
        rounds: settings.rounds,
        pets: settings.pets,
        logLevel: settings.logLevel,
        serviceEnv: settings.serviceEnv,
        cpuPlacement: placement,
        limitsPhase:
          limits === undefined
            ? undefined
            : {
                invocations: settings.limitsInvocations,
                runsPerInvocation: settings.limitsRuns,
                seconds: settings.limitsSeconds,
                warmupSeconds: settings.limitsWarmupSeconds,
                cpuPlacement: limits.placement,
              },
      },
      serviceLogBytes,
      scenarios: summaries,
      limitsCost: limits?.costs ?? [],
      errors: problems,
    };
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    log(`bench: results written to ${resultsFile}`);
    return problems.length > 0 ? 1 : 0;
  } finally {
    await cleanUp();
  }
}

process.exitCode = await main().catch((error: unknown) => {
  log(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return 1;
});
