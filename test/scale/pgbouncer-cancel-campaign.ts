import { randomBytes, randomUUID } from 'node:crypto';
import { createConnection } from 'node:net';
import { Client } from 'pg';
import { POSTGRES_TEST_URL } from '../support/backends.ts';
import { startPgBouncer, withDatabase, type PgBouncerOptions, type RunningPgBouncer } from '../support/pgbouncer.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { wholeNumberSetting } from '../support/campaign-settings.ts';

/**
 * A fault campaign against PgBouncer's forwarding of cancel requests while PostgreSQL is
 * unreachable. It takes minutes, so it is not part of `npm test` (test/storage/pgbouncer-cancel.test.ts
 * is the quick check of the same fault); run it by hand:
 *
 *   node --conditions=@petstore/source test/scale/pgbouncer-cancel-campaign.ts
 *
 * Part 1, the service: its HTTP app in this process, over PgBouncer (Debian's, transaction mode,
 * default settings) over a TCP proxy to PostgreSQL, under concurrent idempotent creations and
 * reads, through outage cycles of several kinds. A PgBouncer that exits is counted and started
 * again on the same port. At the end every creation answered 201 must be in the database once.
 *
 * Part 2, the protocol: one statement left hanging on a silent server, and cancel requests for it
 * sent straight to PgBouncer, hung up at chosen moments, to find what makes PgBouncer exit; the
 * service's cancel of 1.1.0 is tried again with PgBouncer settings that might have prevented it.
 *
 *   CAMPAIGN_CYCLES   outage cycles of part 1 (default 30)
 *   CAMPAIGN_CLIENTS  concurrent HTTP clients of part 1 (default 12)
 *   CAMPAIGN_PROBES   runs of each case of part 2 (default 5; 0 leaves part 2 out)
 *
 * Exits 1 when PgBouncer exited in part 1 or a creation was lost or duplicated.
 */

const TIMEOUT_MS = 500;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number): number => low + Math.floor(Math.random() * (high - low));

// ---------------------------------------------------------------------------------------------
// PgBouncer, watched

/** What PgBouncer logged about cancel requests, over all the processes of a part. */
interface CancelCounts {
  /** Cancels PgBouncer forwarded to the server. */
  forwarded: number;
  /** Cancels for a client with no server (its query waits in PgBouncer): answered at once, not forwarded. */
  forIdleClient: number;
  /** Cancels PgBouncer closed once the server had taken them. */
  answered: number;
  /** Cancel senders that hung up on PgBouncer first. */
  hungUp: number;
}

const CANCEL_PATTERNS: Readonly<Record<keyof CancelCounts, RegExp>> = {
  forwarded: /started sending cancel request/,
  forIdleClient: /closing because: cancel request for idle client/,
  answered: /\(nouser\)@.* closing because: successfully sent cancel request/,
  hungUp: /\(nouser\)@.* closing because: client unexpected eof/,
};

function countCancels(log: string): CancelCounts {
  const lines = log.split('\n');
  const count = (pattern: RegExp): number => lines.filter((line) => pattern.test(line)).length;
  return {
    forwarded: count(CANCEL_PATTERNS.forwarded),
    forIdleClient: count(CANCEL_PATTERNS.forIdleClient),
    answered: count(CANCEL_PATTERNS.answered),
    hungUp: count(CANCEL_PATTERNS.hungUp),
  };
}

function addCounts(total: CancelCounts, more: CancelCounts): CancelCounts {
  return {
    forwarded: total.forwarded + more.forwarded,
    forIdleClient: total.forIdleClient + more.forIdleClient,
    answered: total.answered + more.answered,
    hungUp: total.hungUp + more.hungUp,
  };
}

const NO_CANCELS: CancelCounts = { forwarded: 0, forIdleClient: 0, answered: 0, hungUp: 0 };

const fatalLine = (log: string): string | undefined => log.split('\n').find((line) => line.includes('FATAL'));

/** Why PgBouncer stopped, if it did: its FATAL line or its exit status. */
function exitReason(bouncer: RunningPgBouncer): string | undefined {
  const fatal = fatalLine(bouncer.log());
  const status = bouncer.exitStatus();
  if (fatal === undefined && status === undefined) return undefined;
  return fatal?.replace(/^.*?FATAL/, 'FATAL') ?? `exited (${status})`;
}

// ---------------------------------------------------------------------------------------------
// Part 1: the service under load through outages

interface Outage {
  readonly name: string;
  run(proxy: TcpProxy, load: Load): Promise<void>;
}

const OUTAGES: readonly Outage[] = [
  {
    name: 'silence, then restore',
    async run(proxy) {
      proxy.silence();
      await sleep(between(1500, 4000));
      proxy.forward();
    },
  },
  {
    name: 'silence, then every connection dropped, then restore',
    async run(proxy) {
      proxy.silence();
      await sleep(between(1500, 4000));
      proxy.blackhole();
      await sleep(300);
      proxy.forward();
    },
  },
  {
    name: 'server connections dropped, new ones silent while they log in, then restore',
    async run(proxy) {
      proxy.blackhole();
      proxy.silence();
      await sleep(between(1500, 4000));
      proxy.forward();
    },
  },
  {
    name: 'flapping: silent 400 ms, passing 150 ms, for 3 s',
    async run(proxy) {
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        proxy.silence();
        await sleep(400);
        proxy.forward();
        await sleep(150);
      }
    },
  },
  {
    name: 'refused, then restore',
    async run(proxy) {
      await proxy.refuse();
      await sleep(between(1000, 3000));
      proxy.forward();
    },
  },
  {
    name: 'silence while HTTP clients hang up after 200 ms, then restore',
    async run(proxy, load) {
      load.abortAfterMs = 200;
      proxy.silence();
      await sleep(between(1500, 4000));
      proxy.forward();
      load.abortAfterMs = undefined;
    },
  },
  {
    name: 'silence with a burst of 60 reads at once, then restore',
    async run(proxy, load) {
      proxy.silence();
      await Promise.all(Array.from({ length: 60 }, () => load.read()));
      await sleep(between(500, 2000));
      proxy.forward();
    },
  },
];

/** Concurrent clients of the service: idempotent creations, each retried until it is answered 201, and reads. */
class Load {
  abortAfterMs: number | undefined;
  /** Names of the pets answered 201, one per creation. */
  readonly created = new Set<string>();
  readonly statuses = new Map<string, number>();
  attempts = 0;
  /** Creations still without a 201 after a minute of retries. */
  gaveUp = 0;
  private running = true;
  private readonly app: TestApp;
  private readonly key: string;

  constructor(app: TestApp, key: string) {
    this.app = app;
    this.key = key;
  }

  start(clients: number): Promise<void> {
    return Promise.all(Array.from({ length: clients }, () => this.client())).then(() => undefined);
  }

  stop(): void {
    this.running = false;
  }

  private async client(): Promise<void> {
    while (this.running) {
      if (Math.random() < 0.6) await this.create();
      else await this.read();
    }
  }

  private async send(path: string, init: RequestInit = {}): Promise<{ status: number }> {
    const signal = this.abortAfterMs === undefined ? undefined : AbortSignal.timeout(this.abortAfterMs);
    try {
      const response = await fetch(`${this.app.url}${path}`, {
        ...init,
        signal,
        headers: { authorization: `Bearer ${this.key}`, ...init.headers },
      });
      await response.arrayBuffer();
      this.tally(String(response.status));
      return { status: response.status };
    } catch {
      this.tally('aborted by the client');
      return { status: 0 };
    }
  }

  private tally(outcome: string): void {
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
  }

  /** One creation: the same key and body until 201 (after the campaign's last outage too). */
  async create(): Promise<void> {
    const name = `pet-${randomUUID()}`;
    const idempotencyKey = randomUUID();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      this.attempts += 1;
      const { status } = await this.send('/v1/pets', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ name, categoryId: 1, status: 'available' }),
      });
      if (status === 201) {
        this.created.add(name);
        return;
      }
      await sleep(between(20, 200));
    }
    this.gaveUp += 1;
  }

  async read(): Promise<void> {
    const afterId = between(0, Math.max(1, this.created.size));
    await this.send(`/v1/pets?limit=20&afterId=${afterId}`);
  }
}

async function recovered(app: TestApp, key: string, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const response = await fetch(`${app.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    await response.arrayBuffer();
    if (response.status === 200) return true;
    await sleep(100);
  }
  return false;
}

interface CreationCheck {
  /** Answered 201, not in the database. */
  readonly lost: number;
  /** In the database more than once. */
  readonly duplicated: number;
}

interface PartOneResult extends CreationCheck {
  readonly exits: string[];
}

async function partOne(database: string, cycles: number, clients: number): Promise<PartOneResult> {
  const proxy = await startTcpProxy(5432);
  let bouncer = await startPgBouncer({ upstreamPort: proxy.port });
  const logs: string[] = [];
  const app = await startTestApp({
    env: {
      DATABASE_URL: withDatabase(bouncer.url, database),
      STORAGE_TIMEOUT_MS: String(TIMEOUT_MS),
      PG_POOL_SIZE: '10',
      KEY_CACHE_TTL_MS: '0',
    },
  });
  const exits: string[] = [];
  const perOutage = new Map<string, { cycles: number; exits: number }>();
  try {
    const { key } = await app.newKey({ plan: 'enterprise', perMinute: 1e9, perDay: 1e9 });
    const load = new Load(app, key);
    const running = load.start(clients);
    for (let cycle = 1; cycle <= cycles; cycle += 1) {
      const outage = OUTAGES[(cycle - 1) % OUTAGES.length] as Outage;
      await sleep(between(1000, 2000));
      await outage.run(proxy, load);
      const back = await recovered(app, key, 20_000);
      await sleep(1000);
      const tally = perOutage.get(outage.name) ?? { cycles: 0, exits: 0 };
      tally.cycles += 1;
      const reason = exitReason(bouncer);
      if (reason !== undefined) {
        tally.exits += 1;
        exits.push(`cycle ${cycle} (${outage.name}): ${reason}`);
        logs.push(bouncer.log());
        await bouncer.stop();
        bouncer = await startPgBouncer({ port: bouncer.port, upstreamPort: proxy.port });
      }
      perOutage.set(outage.name, tally);
      console.log(
        `cycle ${cycle}/${cycles}: ${outage.name}: ${back ? 'recovered' : 'NOT recovered in 20 s'}` +
          (reason === undefined ? '' : `; PgBouncer: ${reason}`),
      );
    }
    load.stop();
    await running;
    logs.push(bouncer.log());
    const { lost, duplicated } = await checkCreations(database, load.created);
    const cancels = logs.map(countCancels).reduce(addCounts, NO_CANCELS);
    printPartOne({ perOutage, load, lost, duplicated, cancels, exits });
    return { exits, lost, duplicated };
  } finally {
    proxy.forward();
    await app.close();
    await bouncer.stop();
    await proxy.close();
  }
}

interface PartOneReport extends CreationCheck {
  readonly perOutage: ReadonlyMap<string, { readonly cycles: number; readonly exits: number }>;
  readonly load: Load;
  readonly cancels: CancelCounts;
  readonly exits: readonly string[];
}

function printPartOne({ perOutage, load, lost, duplicated, cancels, exits }: PartOneReport): void {
  console.log('\npart 1: the service');
  for (const [name, tally] of perOutage) console.log(`  ${tally.cycles} × ${name}: PgBouncer exited ${tally.exits}×`);
  console.log(`  HTTP answers: ${JSON.stringify(Object.fromEntries(load.statuses))}`);
  console.log(
    `  creations: ${load.created.size} answered 201 after ${load.attempts} attempts, ${load.gaveUp} given up; ` +
      `lost ${lost}, in the database more than once ${duplicated}`,
  );
  console.log(`  cancel requests in PgBouncer's log: ${JSON.stringify(cancels)}`);
  for (const exit of exits) console.log(`  PgBouncer: ${exit}`);
}

/** Every pet answered 201 is in the database, once; its name is unique to its creation. */
async function checkCreations(database: string, created: ReadonlySet<string>): Promise<CreationCheck> {
  const client = new Client({ connectionString: withDatabase(POSTGRES_TEST_URL, database) });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; count: string }>(
      'SELECT name, count(*) AS count FROM pets GROUP BY name',
    );
    const counts = new Map(rows.map((row) => [row.name, Number(row.count)]));
    let lost = 0;
    for (const name of created) if (!counts.has(name)) lost += 1;
    const duplicated = rows.filter((row) => Number(row.count) > 1).length;
    return { lost, duplicated };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Part 2: cancel requests sent straight to PgBouncer

/** PostgreSQL's CancelRequest code (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80877102;

/** When a cancel's sender hangs up: after `ms`, or never (PgBouncer closes it once the server took it). */
type HangUp = { readonly afterMs: number } | 'never';

interface Probe {
  readonly name: string;
  /** Cancels sent at once for the one hanging statement. */
  readonly cancels: number;
  readonly hangUp: HangUp;
  /** How the outage ends: the network comes back, or every connection through it is dropped. */
  readonly end: 'restore' | 'drop';
  /** The statement is sent while PgBouncer still logs its server connection in (none is idle). */
  readonly whileLoggingIn?: boolean;
  /** The connection that sent the statement hangs up 10 ms after the cancels. */
  readonly senderHangsUp?: boolean;
}

const PROBES: readonly Probe[] = [
  { name: 'hung up as soon as written', cancels: 1, hangUp: { afterMs: 0 }, end: 'restore' },
  { name: 'hung up after 10 ms', cancels: 1, hangUp: { afterMs: 10 }, end: 'restore' },
  { name: 'hung up after 1 s (as the service did in 1.1.0)', cancels: 1, hangUp: { afterMs: 1000 }, end: 'restore' },
  { name: 'hung up after 1 s, then every connection dropped', cancels: 1, hangUp: { afterMs: 1000 }, end: 'drop' },
  { name: 'kept open until PgBouncer closes it (as the service does)', cancels: 1, hangUp: 'never', end: 'restore' },
  { name: 'kept open, then every connection dropped', cancels: 1, hangUp: 'never', end: 'drop' },
  { name: '20 at once, kept open', cancels: 20, hangUp: 'never', end: 'restore' },
  { name: '20 at once, hung up after 1 s', cancels: 20, hangUp: { afterMs: 1000 }, end: 'restore' },
  {
    name: 'while PgBouncer logs its server connection in, hung up after 1 s',
    cancels: 1,
    hangUp: { afterMs: 1000 },
    end: 'restore',
    whileLoggingIn: true,
  },
  {
    name: 'kept open while the statement’s own connection hangs up',
    cancels: 1,
    hangUp: 'never',
    end: 'restore',
    senderHangsUp: true,
  },
];

/** The service's cancel in 1.1.0, on which the settings below are tried. */
const SETTINGS_PROBE: Probe = { name: 'hung up after 1 s', cancels: 1, hangUp: { afterMs: 1000 }, end: 'restore' };

/** PgBouncer settings that might have kept it up. */
const SETTINGS: readonly Readonly<Record<string, string>>[] = [
  { query_timeout: '1' },
  { query_wait_timeout: '1' },
  { server_connect_timeout: '1' },
  { tcp_keepalive: '0' },
];

interface Keys {
  readonly processID: number;
  readonly secretKey: number;
}

function keysOf(client: Client): Keys {
  const { processID, secretKey } = client as Client & { processID?: unknown; secretKey?: unknown };
  if (typeof processID !== 'number' || typeof secretKey !== 'number') throw new Error('no cancel key');
  return { processID, secretKey };
}

/** Sends one cancel request; resolves once it is written, and hangs up as told. */
function sendCancel(port: number, keys: Keys, hangUp: HangUp): Promise<void> {
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(keys.processID, 8);
  request.writeInt32BE(keys.secretKey, 12);
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(request, () => {
        if (hangUp !== 'never') setTimeout(() => socket.destroy(), hangUp.afterMs);
        resolve();
      });
    });
    // PgBouncer closes it, or the campaign ends: it never outlives the process's work.
    socket.unref();
  });
}

async function connectedThrough(bouncer: RunningPgBouncer, database: string): Promise<Client> {
  const client = new Client({ connectionString: withDatabase(bouncer.url, database) });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** One run of a probe with its own proxy and PgBouncer; the reason PgBouncer exited, if it did. */
async function runProbe(
  database: string,
  probe: Probe,
  settings: PgBouncerOptions['settings'],
): Promise<string | undefined> {
  const proxy = await startTcpProxy(5432);
  const bouncer = await startPgBouncer({ upstreamPort: proxy.port, settings });
  const client = await connectedThrough(bouncer, database);
  // Holds PgBouncer's only server connection in a transaction: the statement needs a new one.
  const blocker = probe.whileLoggingIn ? await connectedThrough(bouncer, database) : undefined;
  try {
    await (blocker ?? client).query(blocker ? 'BEGIN' : 'SELECT 1');
    proxy.silence();
    const hanging = client.query('SELECT 1').catch(() => undefined);
    await sleep(100);
    await Promise.all(
      Array.from({ length: probe.cancels }, () => sendCancel(bouncer.port, keysOf(client), probe.hangUp)),
    );
    if (probe.senderHangsUp) {
      await sleep(10);
      (client as Client & { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    }
    await sleep(1500);
    if (probe.end === 'drop') proxy.blackhole();
    proxy.forward();
    await Promise.race([hanging, sleep(2000)]);
    await sleep(500);
    return exitReason(bouncer);
  } finally {
    await Promise.all([client.end().catch(() => undefined), blocker?.end().catch(() => undefined)]);
    await bouncer.stop();
    await proxy.close();
  }
}

async function partTwo(database: string, runs: number): Promise<void> {
  if (runs === 0) return;
  console.log('\npart 2: cancel requests sent straight to PgBouncer, one statement hanging on a silent server');
  for (const probe of PROBES) {
    const reasons: string[] = [];
    for (let run = 0; run < runs; run += 1) {
      const reason = await runProbe(database, probe, undefined);
      if (reason !== undefined) reasons.push(reason);
    }
    console.log(`  ${probe.name}: PgBouncer exited in ${reasons.length} of ${runs}${describeReasons(reasons)}`);
  }
  console.log(`\n  with settings, on "${SETTINGS_PROBE.name}":`);
  for (const settings of SETTINGS) {
    const reasons: string[] = [];
    for (let run = 0; run < runs; run += 1) {
      const reason = await runProbe(database, SETTINGS_PROBE, settings);
      if (reason !== undefined) reasons.push(reason);
    }
    console.log(
      `  ${JSON.stringify(settings)}: PgBouncer exited in ${reasons.length} of ${runs}${describeReasons(reasons)}`,
    );
  }
}

function describeReasons(reasons: readonly string[]): string {
  const distinct = [...new Set(reasons.map((reason) => reason.replace(/^.*in function /, '')))];
  return distinct.length === 0 ? '' : ` (${distinct.join('; ')})`;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const cycles = wholeNumberSetting('CAMPAIGN_CYCLES', 30);
  const clients = wholeNumberSetting('CAMPAIGN_CLIENTS', 12);
  const runs = wholeNumberSetting('CAMPAIGN_PROBES', 5);
  const admin = new Client({ connectionString: POSTGRES_TEST_URL });
  await admin.connect();
  const database = `petstore_campaign_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${database} TEMPLATE template0`);
  const started = Date.now();
  try {
    const version = (await pgBouncerVersion()) ?? 'unknown';
    console.log(`PgBouncer ${version}; ${cycles} outage cycles with ${clients} clients, ${runs} runs of each probe`);
    const one = await partOne(database, cycles, clients);
    await partTwo(database, runs);
    console.log(`\n${Math.round((Date.now() - started) / 1000)} s`);
    return one.exits.length > 0 || one.lost > 0 || one.duplicated > 0 ? 1 : 0;
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

/** The version PgBouncer names in its first log lines. */
async function pgBouncerVersion(): Promise<string | undefined> {
  const bouncer = await startPgBouncer();
  try {
    return /process up: PgBouncer ([^,]+)/.exec(bouncer.log())?.[1];
  } finally {
    await bouncer.stop();
  }
}

process.exitCode = await main();
