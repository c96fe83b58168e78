import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { requestShape, type BareResponses } from './bare-server.ts';
import { checkOutBaseline } from './baseline.ts';
import { runEntry, type CleanUp } from './entry.ts';
import { buildScenarios, measure, type LoadTarget, type Scenario } from './load.ts';
import { roundOrder } from './round-order.ts';
import { formatPeakRss, formatScenario, type RunFigures } from './report.ts';
import {
  seedPets,
  startBare,
  startExpress,
  startFastifyHello,
  startFastifyTypical,
  startService,
  type ChildServer,
} from './servers.ts';
import { loadSettings, type BenchSettings } from './settings.ts';

/**
 * `npm run bench [-- --baseline <git-ref> …]`: the service (and in compare mode an earlier commit's)
 * against a bare node:http server, in alternating rounds; medians and ratios on stdout. See README.md.
 */
const ROOT = join(import.meta.dirname, '..');
const PETS = 10_000;
const WARMUP_SECONDS = 2;

function log(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** A fresh SQLite file, or a PostgreSQL schema of its own selected with libpq's `options`, dropped at the end. */
async function databaseUrl(settings: BenchSettings, workDir: string, name: string, cleanUps: CleanUp[]) {
  if (settings.databaseUrl === undefined) return `sqlite:${join(workDir, `${name}.db`)}`;
  const schema = `petstore_bench_${randomBytes(6).toString('hex')}`;
  const query = async (sql: string): Promise<void> => {
    const client = new Client({ connectionString: settings.databaseUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await query(`CREATE SCHEMA ${schema}`);
  cleanUps.push(() => query(`DROP SCHEMA ${schema} CASCADE`));
  const url = new URL(settings.databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/**
 * The service's answer to each scenario's first request, as its bytes on the wire (compressed when
 * `acceptEncoding` asks for it and the service obliged): what the bare server sends.
 */
async function bareResponses(
  scenarios: readonly Scenario[],
  service: LoadTarget,
  acceptEncoding: string | undefined,
): Promise<BareResponses> {
  const responses: BareResponses = {};
  for (const scenario of scenarios) {
    const [sample] = scenario.requests(service.petIds);
    const { method = 'GET', path = '/', body = undefined } = sample ?? {};
    const headers: Record<string, string> = {
      authorization: `Bearer ${service.key ?? ''}`,
      'content-type': 'application/json',
    };
    if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
    const response = await rawRequest(`${service.url}${path}`, method, headers, body);
    if (response.status < 200 || response.status > 299)
      throw new Error(`${scenario.title}: ${service.name} answered ${response.status}: ${response.body.toString()}`);
    responses[requestShape(method, path)] = {
      status: response.status,
      base64: response.body.toString('base64'),
      contentEncoding: response.contentEncoding,
    };
  }
  return responses;
}

/** One request over node:http, whose body comes back as sent: fetch would decode a compressed one. */
function rawRequest(url: string, method: string, headers: Record<string, string>, body: string | Buffer | undefined) {
  const { promise, resolve, reject } = Promise.withResolvers<{
    status: number;
    body: Buffer;
    contentEncoding: string | undefined;
  }>();
  const outgoing = httpRequest(url, { method, headers }, (incoming) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('error', reject);
    incoming.on('end', () => {
      const status = incoming.statusCode ?? 0;
      resolve({ status, body: Buffer.concat(chunks), contentEncoding: incoming.headers['content-encoding'] });
    });
  });
  outgoing.on('error', reject);
  outgoing.end(body);
  return promise;
}

/** Every target in every round, in an order that changes round by round (roundOrder). */
async function runRounds(settings: BenchSettings, scenarios: readonly Scenario[], targets: readonly LoadTarget[]) {
  const runs = new Map<string, RunFigures[]>();
  const problems: string[] = [];
  for (const scenario of scenarios) {
    for (const target of targets)
      await measure(target, scenario, settings.connections, WARMUP_SECONDS, settings.acceptEncoding);
  }
  for (let round = 1; round <= settings.rounds; round += 1) {
    const order = roundOrder(targets, round);
    for (const scenario of scenarios) {
      for (const target of order) {
        const run = `${scenario.name} ${target.name}`;
        const { connections, durationSeconds, acceptEncoding } = settings;
        const result = await measure(target, scenario, connections, durationSeconds, acceptEncoding);
        runs.set(run, [...(runs.get(run) ?? []), result]);
        problems.push(...result.problems.map((problem) => `round ${round} ${run}: ${problem}`));
        const [perSecond, p50, p99] = [
          result.requestsPerSecond.toFixed(0),
          result.p50Ms.toFixed(2),
          result.p99Ms.toFixed(2),
        ];
        const cpu =
          result.cpuMicrosPerRequest === undefined ? '' : `, CPU ${result.cpuMicrosPerRequest.toFixed(1)} µs/req`;
        log(`round ${round} ${run}: ${perSecond} req/s, p50 ${p50} ms, p99 ${p99} ms${cpu}`);
      }
    }
  }
  return { runs, problems };
}

/** A started server as the load generator sees it. */
function asTarget(name: string, server: ChildServer, key: string | undefined, petIds: readonly string[]): LoadTarget {
  return { name, url: server.url, key, petIds, cpuSeconds: server.cpuSeconds };
}

async function bench(settings: BenchSettings, cleanUps: CleanUp[]): Promise<number> {
  const workDir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  cleanUps.push(() => rmSync(workDir, { recursive: true, force: true }));
  const checkouts = [{ name: settings.baselines.length === 0 ? 'service' : 'current', dir: ROOT }];
  for (const ref of settings.baselines.toReversed()) {
    const baseline = checkOutBaseline(ROOT, ref, workDir);
    cleanUps.push(() => baseline.remove());
    // One baseline is `baseline`; several are named by their commits.
    const name = settings.baselines.length === 1 ? 'baseline' : baseline.commit;
    checkouts.unshift({ name, dir: baseline.dir });
    log(`baseline ${ref} is commit ${baseline.commit}`);
  }
  const services: LoadTarget[] = [];
  const servers = new Map<string, ChildServer>();
  for (const { name, dir } of checkouts) {
    log(`seeding ${PETS} pets into ${name}`);
    const url = await databaseUrl(settings, workDir, name, cleanUps);
    const { server, key } = await startService(name, dir, url, settings.redisUrl);
    cleanUps.push(() => server.stop());
    servers.set(name, server);
    services.push(asTarget(name, server, key, await seedPets(server.url, key, PETS)));
  }
  // The stacks people would pick instead, on SQLite whatever BENCH_DATABASE_URL says; seeded the same way.
  const peers: LoadTarget[] = [];
  const peerStarts = {
    express: () => startExpress(join(workDir, 'express.db')),
    'fastify-typical': () => startFastifyTypical(join(workDir, 'fastify-typical.db'), false),
    'fastify-typical-log': () => startFastifyTypical(join(workDir, 'fastify-typical-log.db'), true),
  };
  for (const [name, start] of Object.entries(peerStarts)) {
    log(`seeding ${PETS} pets into ${name}`);
    const peer = await start();
    cleanUps.push(() => peer.server.stop());
    servers.set(name, peer.server);
    peers.push(asTarget(name, peer.server, peer.key, await seedPets(peer.server.url, peer.key, PETS)));
  }
  const scenarios = buildScenarios(settings.scenarios, PETS);
  const current = services.at(-1) as LoadTarget;
  const responses = await bareResponses(scenarios, current, settings.acceptEncoding);
  const bare = await startBare(responses);
  cleanUps.push(() => bare.stop());
  servers.set('bare', bare);
  const fastifyHello = await startFastifyHello(responses);
  cleanUps.push(() => fastifyHello.stop());
  servers.set('fastify-hello', fastifyHello);
  const targets: LoadTarget[] = [
    asTarget('bare', bare, undefined, current.petIds),
    asTarget('fastify-hello', fastifyHello, undefined, current.petIds),
    ...peers,
    ...services,
  ];
  const encoding = settings.acceptEncoding === undefined ? '' : `, Accept-Encoding: ${settings.acceptEncoding}`;
  log(`${settings.rounds} rounds of ${settings.durationSeconds} s per scenario and target${encoding}`);
  // The peaks count from here: the load of the rounds, not the seeding's.
  for (const server of servers.values()) server.resetPeakRss();
  const { runs, problems } = await runRounds(settings, scenarios, targets);
  const memory = targets.map(({ name }) => ({ target: name, peakRssBytes: servers.get(name)?.peakRssBytes() }));
  for (const scenario of scenarios) {
    const perTarget = targets.map(({ name }) => ({ target: name, runs: runs.get(`${scenario.name} ${name}`) ?? [] }));
    process.stdout.write(`\n${formatScenario(scenario.title, perTarget)}\n`);
  }
  process.stdout.write(`\n${formatPeakRss(memory)}\n`);
  for (const problem of problems) log(problem);
  return problems.length > 0 ? 1 : 0;
}

await runEntry((cleanUps) => bench(loadSettings(process.argv.slice(2), process.env), cleanUps), log);
