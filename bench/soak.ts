import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountService } from '../src/auth/account-service.ts';
import { generateApiKey } from '../src/auth/api-key.ts';
import { systemClock } from '../src/clock.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import { openStore } from '../src/storage/open-store.ts';
import { log, positive, send, startChild, stopChild } from './soak-server.ts';
import { usageTallySoak } from './soak-usage-tally.ts';

/**
 * `npm run soak`: the real server as a child process under hostile traffic (distinct long client
 * addresses, distinct long keys well-formed and not, large pages through distinct cursors), with
 * its resident memory sampled before, during and after. Exits 1 if the peak passes the ceiling.
 * See docs/operations.md, Memory.
 */
const PETS = 2200;
const EMOJI_NAME = '🐕'.repeat(200);
const LONG = 15_000;

interface Settings {
  readonly requests: number;
  readonly concurrency: number;
  readonly maxRssMb: number;
  readonly sampleMs: number;
  readonly settleSeconds: number;
  /** Which kinds of request (KINDS) the mix cycles through. */
  readonly kinds: readonly Kind[];
}

interface Sample {
  readonly seconds: number;
  readonly phase: 'before' | 'load' | 'after';
  readonly rssMb: number;
}

function loadSettings(): Settings {
  return {
    requests: positive('SOAK_REQUESTS', 200_000),
    concurrency: positive('SOAK_CONCURRENCY', 128),
    // Above the spread of plateaus this service reaches (278–333 MB, docs/operations.md), and far below
    // what unbounded growth reaches (over 1 GB when caches were capped in entries, not bytes).
    maxRssMb: positive('SOAK_MAX_RSS_MB', 350),
    sampleMs: positive('SOAK_SAMPLE_SECONDS', 3) * 1000,
    settleSeconds: positive('SOAK_SETTLE_SECONDS', 60),
    kinds: kindsOf(process.env.SOAK_KINDS),
  };
}

const KINDS = ['long-address', 'address', 'unknown-key', 'malformed-key', 'page', 'pet'] as const;
type Kind = (typeof KINDS)[number];

function kindsOf(raw: string | undefined): readonly Kind[] {
  if (raw === undefined || raw === '') return KINDS;
  const kinds = raw.split(',');
  for (const kind of kinds)
    if (!KINDS.includes(kind as Kind)) throw new Error(`SOAK_KINDS: unknown kind ${kind}; known: ${KINDS.join(', ')}`);
  return kinds as Kind[];
}

/** Pets with 200-emoji names and an enterprise key that is never rate limited, straight into the file. */
async function seed(databaseUrl: string): Promise<string> {
  const store = await openStore({ databaseUrl, pgPoolSize: 1, storageTimeoutMs: 10_000 });
  try {
    await store.migrate();
    const accounts = new AccountService(store, systemClock);
    await accounts.createAccount('soak', { plan: 'enterprise', perMinute: 1e9, perDay: 1e9 });
    const { key } = await accounts.createKey('soak');
    for (let i = 0; i < PETS; i += 1)
      await store.pets.create({ name: EMOJI_NAME, categoryId: BigInt(i), status: 'available' }, Date.now());
    return key;
  } finally {
    await store.close();
  }
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/** Request `i` of the mix; every hostile value is distinct from every other. */
function requestOf(i: number, kind: Kind, key: string): { path: string; headers: Record<string, string> } {
  const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  switch (kind) {
    case 'long-address': // a long, distinct client address: one token, so it is the client under every trust setting
      return { path: '/v1/pets', headers: { 'x-forwarded-for': `${i}-${'f'.repeat(LONG)}` } };
    case 'address': // many distinct well-formed addresses
      return {
        path: '/v1/pets',
        headers: { 'x-forwarded-for': `2001:db8::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}` },
      };
    case 'unknown-key': // a well-formed unknown key behind distinct padding: a new cache key each time
      return {
        path: '/v1/pets',
        headers: {
          authorization: `Bearer ${' '.repeat(LONG - (i % 1000))}${generateApiKey()}`,
          'x-forwarded-for': address,
        },
      };
    case 'malformed-key': // a long malformed key
      return {
        path: '/v1/pets',
        headers: { authorization: `Bearer ${i}${'%'.repeat(LONG)}`, 'x-forwarded-for': address },
      };
    case 'page': // a large page through a distinct cursor and limit
      return {
        path: `/v1/pets?limit=${50 + (i % 51)}&cursor=${encodeCursor(1 + (i % (PETS - 150)))}`,
        headers: { authorization: `Bearer ${key}` },
      };
    case 'pet': // a pet with a long multi-byte name
      return { path: `/v1/pets/${1 + (i % PETS)}`, headers: { authorization: `Bearer ${key}` } };
  }
}

async function drive(url: string, key: string, settings: Settings): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: settings.concurrency });
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < settings.requests) {
      const i = next;
      next += 1;
      const { path, headers } = requestOf(i, settings.kinds[i % settings.kinds.length] as Kind, key);
      const status = await send(agent, url, path, headers);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (i % 20_000 === 0) log(`${i} requests sent`);
    }
  };
  await Promise.all(Array.from({ length: settings.concurrency }, worker));
  agent.destroy();
  return statuses;
}

async function main(): Promise<number> {
  const settings = loadSettings();
  const workDir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
  const databaseUrl = `sqlite:${join(workDir, 'soak.db')}`;
  let child: ChildProcess | undefined;
  try {
    log(`seeding ${PETS} pets with 200-emoji names`);
    const key = await seed(databaseUrl);
    // The soak's hostile X-Forwarded-For values count only when the loopback peer is a trusted proxy.
    const trustProxy = '127.0.0.1';
    const started = await startChild({
      DATABASE_URL: databaseUrl,
      TRUST_PROXY: trustProxy,
      LOG_LEVEL: 'warn',
      DEMO_BOOTSTRAP: 'false',
    });
    child = started.child;
    const pid = child.pid as number;
    const origin = Date.now();
    const samples: Sample[] = [];
    let phase: Sample['phase'] = 'before';
    const sample = (): void => {
      samples.push({ seconds: Math.round((Date.now() - origin) / 100) / 10, phase, rssMb: rssMb(pid) });
    };
    sample();
    phase = 'load';
    const timer = setInterval(sample, settings.sampleMs);
    log(`${settings.requests} requests at concurrency ${settings.concurrency}, TRUST_PROXY=${trustProxy}`);
    const loadStart = Date.now();
    const statuses = await drive(started.url, key, settings);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    phase = 'after';
    sample();
    log(`load done in ${loadSeconds.toFixed(1)} s; settling ${settings.settleSeconds} s`);
    await new Promise((resolve) => setTimeout(resolve, settings.settleSeconds * 1000));
    clearInterval(timer);
    sample();
    log(`child after settling: ${await heapFigures(started.metricsUrl)}`);
    return report(samples, statuses, settings, loadSeconds);
  } finally {
    await stopChild(child);
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The child's own heap figures from its operator listener, to tell live data from memory not yet returned. */
async function heapFigures(metricsUrl: string): Promise<string> {
  const text = await fetch(`${metricsUrl}/metrics`).then(
    (response) => response.text(),
    () => '',
  );
  const names = ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes'];
  return names
    .map((name) => {
      const match = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
      return `${name.replace('nodejs_', '')} ${match ? (Number(match[1]) / 1048576).toFixed(1) : '?'} MB`;
    })
    .join(', ');
}

function report(
  samples: readonly Sample[],
  statuses: ReadonlyMap<number, number>,
  settings: Settings,
  seconds: number,
): number {
  const lines = ['seconds  phase   RSS MB'];
  for (const s of samples)
    lines.push(`${s.seconds.toFixed(1).padStart(7)}  ${s.phase.padEnd(6)}  ${s.rssMb.toFixed(1).padStart(6)}`);
  const peak = Math.max(...samples.map((s) => s.rssMb));
  const last = samples.at(-1) as Sample;
  const counts = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`);
  lines.push(
    `requests: ${settings.requests} in ${seconds.toFixed(1)} s (${Math.round(settings.requests / seconds)}/s)`,
  );
  lines.push(`statuses: ${counts.join(', ')}`);
  lines.push(
    `RSS before ${(samples[0] as Sample).rssMb.toFixed(1)} MB, peak ${peak.toFixed(1)} MB, ` +
      `${settings.settleSeconds} s after ${last.rssMb.toFixed(1)} MB; ceiling ${settings.maxRssMb} MB`,
  );
  const failed =
    peak > settings.maxRssMb || (statuses.get(-1) ?? 0) > 0 || [...statuses.keys()].some((s) => s >= 500 && s !== 503);
  lines.push(failed ? 'FAIL' : 'PASS');
  process.stdout.write(lines.join('\n') + '\n');
  return failed ? 1 : 0;
}

/** SOAK_SCENARIO picks what the soak measures: memory under hostile traffic (the default), or usage-tally. */
function scenario(): 'memory' | 'usage-tally' {
  const raw = process.env.SOAK_SCENARIO ?? 'memory';
  if (raw === '' || raw === 'memory') return 'memory';
  if (raw === 'usage-tally') return raw;
  throw new Error(`SOAK_SCENARIO: unknown scenario ${raw}; known: memory, usage-tally`);
}

process.exitCode = scenario() === 'usage-tally' ? await usageTallySoak() : await main();
