import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountService } from '../src/auth/account-service.ts';
import { systemClock } from '../src/clock.ts';
import { openStore } from '../src/storage/open-store.ts';
import { DEFAULT_TALLY_ENTRIES } from '../src/usage/usage-tally.ts';
import { log, positive, send, startChild, stopChild } from './soak-server.ts';

/**
 * `SOAK_SCENARIO=usage-tally npm run soak`: what a full usage tally costs the requests around it.
 * The server runs as `npm start` does, with flushes 10 minutes apart, so that the tally only grows.
 * Twice, with the tally nearly empty and then filled to its bound through real requests (distinct
 * keys × operations × outcomes), bursts of usage reads (`GET /v1/usage/history` and `GET /v1/usage`,
 * one per free account, all at once) run beside a steady list load; it prints the p99 of each (of
 * the lists sent while a burst was under way), full against empty, and exits 1 when the full
 * tally's p99 is more than twice the empty one's.
 */

/** The answers one key can give in the fill, each an entry of the tally. */
const FILL_REQUESTS: readonly { readonly path: string; readonly body?: unknown }[] = [
  { path: '/v1/pets?limit=5' }, // listPets 2xx
  { path: '/v1/pets?limit=0' }, // listPets 4xx
  { path: '/v1/pets/1' }, // getPet 2xx
  { path: '/v1/pets/999999999' }, // getPet 4xx
  { path: '/v1/pets', body: { name: '' } }, // createPet 4xx
];
const KEYS_PER_FILL_ACCOUNT = 50;
const READERS = 60;
/** The most the full tally's p99 may be, as a multiple of the empty tally's. */
const MAX_RATIO = 2;

interface Settings {
  readonly entries: number;
  readonly bursts: number;
  readonly listConnections: number;
  readonly fillConcurrency: number;
}

function loadSettings(): Settings {
  return {
    entries: positive('SOAK_TALLY_ENTRIES', DEFAULT_TALLY_ENTRIES),
    bursts: positive('SOAK_BURSTS', 10),
    listConnections: positive('SOAK_LIST_CONNECTIONS', 4),
    fillConcurrency: positive('SOAK_CONCURRENCY', 32),
  };
}

interface Keys {
  readonly load: string;
  readonly readers: readonly string[];
  readonly fill: readonly string[];
}

/** One enterprise key for the list load, a free account per reader, and the fill's keys (enterprise, never limited). */
async function seed(databaseUrl: string, fillKeys: number): Promise<Keys> {
  const store = await openStore({ databaseUrl, pgPoolSize: 1, storageTimeoutMs: 10_000 });
  try {
    await store.migrate();
    const accounts = new AccountService(store, systemClock);
    await accounts.createAccount('load', { plan: 'enterprise', perMinute: 1e9, perDay: 1e9 });
    const load = (await accounts.createKey('load')).key;
    for (let i = 0; i < 30; i += 1)
      await store.pets.create({ name: `pet-${i}`, categoryId: 1n, status: 'available' }, Date.now());
    const readers: string[] = [];
    for (let i = 0; i < READERS; i += 1) {
      await accounts.createAccount(`reader-${i}`, { plan: 'free' });
      readers.push((await accounts.createKey(`reader-${i}`)).key);
    }
    const fill: string[] = [];
    for (let i = 0; i < fillKeys; i += 1) {
      const account = `fill-${Math.floor(i / KEYS_PER_FILL_ACCOUNT)}`;
      if (i % KEYS_PER_FILL_ACCOUNT === 0)
        await accounts.createAccount(account, { plan: 'enterprise', perMinute: 1e9, perDay: 1e9 });
      fill.push((await accounts.createKey(account)).key);
      if (i % 5000 === 4999) log(`${i + 1} fill keys`);
    }
    return { load, readers, fill };
  } finally {
    await store.close();
  }
}

async function timed(send: () => Promise<number>): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const status = await send();
  return { status, ms: performance.now() - started };
}

interface Phase {
  readonly list: number[];
  readonly reads: number[];
  readonly statuses: Map<number, number>;
}

/** The list load on its own connections for as long as the bursts last; each burst waits for all its reads. */
async function measure(url: string, keys: Keys, settings: Settings): Promise<Phase> {
  const phase: Phase = { list: [], reads: [], statuses: new Map() };
  const note = (status: number): void => void phase.statuses.set(status, (phase.statuses.get(status) ?? 0) + 1);
  const listAgent = new Agent({ keepAlive: true, maxSockets: settings.listConnections });
  const readAgent = new Agent({ keepAlive: true, maxSockets: READERS });
  let bursting = true;
  // Only the lists sent while a burst is under way count: the time between bursts would hide its cost.
  let inBurst = false;
  const lister = async (): Promise<void> => {
    while (bursting) {
      const during = inBurst;
      const answer = await timed(() =>
        send(listAgent, url, '/v1/pets?limit=20', { authorization: `Bearer ${keys.load}` }),
      );
      note(answer.status);
      if (during) phase.list.push(answer.ms);
    }
  };
  const listers = Array.from({ length: settings.listConnections }, lister);
  // Let the list load settle into its pace before the first burst.
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let burst = 0; burst < settings.bursts; burst += 1) {
    inBurst = true;
    const reads = keys.readers.map((key, index) =>
      timed(() =>
        send(readAgent, url, index % 2 === 0 ? '/v1/usage/history' : '/v1/usage', { authorization: `Bearer ${key}` }),
      ),
    );
    const answers = await Promise.all(reads);
    inBurst = false;
    for (const answer of answers) {
      note(answer.status);
      phase.reads.push(answer.ms);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  bursting = false;
  await Promise.all(listers);
  listAgent.destroy();
  readAgent.destroy();
  return phase;
}

/** Every fill key's answers, until the server says its tally left a request out: it is full. */
async function fill(url: string, metricsUrl: string, keys: Keys, settings: Settings): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: settings.fillConcurrency });
  let next = 0;
  const total = keys.fill.length * FILL_REQUESTS.length;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next;
      next += 1;
      const key = keys.fill[Math.floor(i / FILL_REQUESTS.length)] as string;
      const { path, body } = FILL_REQUESTS[i % FILL_REQUESTS.length] as (typeof FILL_REQUESTS)[number];
      await send(agent, url, path, { authorization: `Bearer ${key}` }, body);
      if (i % 20_000 === 0) log(`${i} fill requests sent`);
    }
  };
  await Promise.all(Array.from({ length: settings.fillConcurrency }, worker));
  agent.destroy();
  return uncounted(metricsUrl);
}

async function uncounted(metricsUrl: string): Promise<number> {
  const text = await fetch(`${metricsUrl}/metrics`).then((response) => response.text());
  const match = /^petstore_usage_uncounted_total (\S+)/m.exec(text);
  return match ? Number(match[1]) : 0;
}

function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

export async function usageTallySoak(): Promise<number> {
  const settings = loadSettings();
  const workDir = mkdtempSync(join(tmpdir(), 'petstore-soak-usage-'));
  const databaseUrl = `sqlite:${join(workDir, 'soak.db')}`;
  let child: ChildProcess | undefined;
  try {
    // A margin over the bound: the readers' and the load's entries are in it too.
    const fillKeys = Math.ceil((settings.entries * 1.02) / FILL_REQUESTS.length);
    log(`seeding ${READERS} readers and ${fillKeys} fill keys`);
    const keys = await seed(databaseUrl, fillKeys);
    const started = await startChild({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      DEMO_BOOTSTRAP: 'false',
      USAGE_FLUSH_MS: '600000',
    });
    child = started.child;
    // A fresh process runs its first requests slowly (JIT): two bursts warm it up, not counted.
    await measure(started.url, keys, { ...settings, bursts: 2 });
    log(`empty tally: ${settings.bursts} bursts of ${READERS} usage reads beside ${settings.listConnections} listers`);
    const empty = await measure(started.url, keys, settings);
    log(`filling the tally: ${fillKeys * FILL_REQUESTS.length} requests`);
    const fillStarted = performance.now();
    const left = await fill(started.url, started.metricsUrl, keys, settings);
    log(`filled in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s; ${left} requests left out`);
    log(`full tally: the same bursts`);
    const full = await measure(started.url, keys, settings);
    return report(empty, full, left);
  } finally {
    await stopChild(child);
    rmSync(workDir, { recursive: true, force: true });
  }
}

function report(empty: Phase, full: Phase, left: number): number {
  const ms = (value: number, width: number): string => value.toFixed(1).padStart(width);
  const row = (name: string, phase: Phase): string =>
    `${name.padEnd(5)}  ${ms(p99(phase.list), 11)}  ${ms(Math.max(...phase.list), 11)}  ` +
    `${ms(p99(phase.reads), 12)}  ${ms(Math.max(...phase.reads), 12)}  ` +
    `${String(phase.list.length).padStart(5)}  ${String(phase.reads.length).padStart(5)}`;
  const lines = [
    'tally  list p99 ms  list max ms  usage p99 ms  usage max ms  lists  reads',
    row('empty', empty),
    row('full', full),
  ];
  const ratios = { list: p99(full.list) / p99(empty.list), reads: p99(full.reads) / p99(empty.reads) };
  lines.push(`full/empty p99: list ${ratios.list.toFixed(2)}, usage reads ${ratios.reads.toFixed(2)}`);
  const statuses = (phase: Phase): string =>
    [...phase.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
  lines.push(`statuses: empty ${statuses(empty)}; full ${statuses(full)}`);
  lines.push(`requests the full tally left out: ${left}`);
  const notOk = (phase: Phase): boolean => [...phase.statuses.keys()].some((status) => status !== 200);
  const failed = left === 0 || notOk(empty) || notOk(full) || ratios.list > MAX_RATIO || ratios.reads > MAX_RATIO;
  lines.push(failed ? 'FAIL' : 'PASS');
  process.stdout.write(lines.join('\n') + '\n');
  return failed ? 1 : 0;
}
