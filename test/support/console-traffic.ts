import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import type { UsageCount } from '../../src/domain/usage-counts.ts';
import { USAGE_OUTCOMES, type UsageOutcome } from '../../src/domain/usage.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { request, type HttpAnswer, type HttpRequest, type HttpTarget } from './http-client.ts';

/**
 * The traffic the operator console's browser tests show on its charts (test/support/console-browser.ts):
 * a month of earlier hours written to storage as the flusher writes it, the requests a test makes on
 * the public port, and the counts of both by outcome, as the usage tally counts them.
 */

export const ACCOUNT = 'console-shop';
export const NEIGHBOUR = 'harbor-pets';
/** Small enough to reach a 429 and then a ban in a handful of requests. */
export const PER_MINUTE = 5;

export type OutcomeCounts = Record<UsageOutcome, number>;

export function outcomeCounts(): OutcomeCounts {
  return { '2xx': 0, '4xx': 0, '429': 0, banned: 0, '5xx': 0 };
}

export function sumCounts(...all: OutcomeCounts[]): OutcomeCounts {
  const sum = outcomeCounts();
  for (const counts of all) for (const outcome of USAGE_OUTCOMES) sum[outcome] += counts[outcome];
  return sum;
}

export function total(counts: OutcomeCounts): number {
  return USAGE_OUTCOMES.reduce((sum, outcome) => sum + counts[outcome], 0);
}

/** The outcome the usage tally counts an answer under. */
export function outcomeOf(answer: HttpAnswer): UsageOutcome {
  if (answer.status < 400) return '2xx';
  if (answer.status >= 500) return '5xx';
  const { code } = answer.json<{ code: string }>();
  if (code === 'key_banned') return 'banned';
  return code === 'rate_limited' ? '429' : '4xx';
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** What writeEarlierTraffic wrote. */
export interface EarlierTraffic {
  readonly shopId: number;
  /** The counts written for hours from `from` on (ms), of one account or of all. */
  since(from: number, accountId?: number): OutcomeCounts;
}

/**
 * A month of hours before the current one for the shop's two keys, and a busier week for the
 * neighbour (with calls of the deprecated getPet, 429s, a ban and two 5xx), written with the
 * flusher's additive upsert. Days peak at 15:00 UTC, weekends are quieter, and the shop grows.
 */
export async function writeEarlierTraffic(
  env: Record<string, string>,
  keys: { readonly shop: readonly [string, string]; readonly neighbour: string },
): Promise<EarlierTraffic> {
  const store = await openStore(loadConfig(env));
  try {
    const shop = await store.accounts.findByName(ACCOUNT);
    const neighbour = await store.accounts.findByName(NEIGHBOUR);
    assert.ok(shop !== undefined && neighbour !== undefined);
    const counts: UsageCount[] = [];
    const add = (count: Omit<UsageCount, 'lastAt'>): void => {
      if (count.count > 0) counts.push({ ...count, lastAt: count.hour + 20 * 60_000 });
    };
    const currentHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const [keyA, keyB] = keys.shop;
    for (let ago = 1; ago < 30 * 24; ago += 1) {
      const hour = currentHour - ago * HOUR_MS;
      const time = new Date(hour);
      const weekend = time.getUTCDay() === 0 || time.getUTCDay() === 6 ? 0.55 : 1;
      const busy = weekend * (0.5 - 0.5 * Math.cos((2 * Math.PI * (time.getUTCHours() - 3)) / 24));
      const growth = 1.3 - (0.6 * ago) / (30 * 24);
      const shopHour = { accountId: shop.id, hour };
      add({
        ...shopHour,
        keyId: keyA,
        operation: 'listPets',
        outcome: '2xx',
        count: Math.round(growth * (4 + 20 * busy)),
      });
      add({
        ...shopHour,
        keyId: keyB,
        operation: 'createPet',
        outcome: '2xx',
        count: Math.round(growth * (1 + 5 * busy)),
      });
      add({ ...shopHour, keyId: keyA, operation: 'listPets', outcome: '4xx', count: ago % 7 === 0 ? 2 : 0 });
      add({ ...shopHour, keyId: keyB, operation: 'createPet', outcome: '429', count: ago % 53 === 0 ? 9 : 0 });
      if (ago > 7 * 24) continue;
      const theirs = { accountId: neighbour.id, keyId: keys.neighbour, hour };
      add({ ...theirs, operation: 'listPets', outcome: '2xx', count: Math.round(10 + 70 * busy) });
      add({ ...theirs, operation: 'getPet', outcome: '2xx', count: Math.round(2 + 8 * busy) });
      add({ ...theirs, operation: 'getPet', outcome: '4xx', count: ago % 5 === 0 ? 3 : 0 });
      add({ ...theirs, operation: 'listPets', outcome: '429', count: ago % 31 === 0 ? 24 : 0 });
      add({ ...theirs, operation: 'listPets', outcome: 'banned', count: ago === 62 ? 14 : 0 });
      add({ ...theirs, operation: 'createPet', outcome: '5xx', count: ago === 100 ? 2 : 0 });
    }
    assert.equal(await store.usage.add(counts, 'waiting'), true, 'the earlier traffic is written');
    return {
      shopId: shop.id,
      since(from, accountId) {
        const sum = outcomeCounts();
        for (const count of counts)
          if (count.hour >= from && (accountId === undefined || count.accountId === accountId))
            sum[count.outcome] += count.count;
        return sum;
      },
    };
  } finally {
    await store.close();
  }
}

/** An issued key, as `petstore key create --json` prints it. */
export interface IssuedKey {
  readonly key: string;
  readonly id: string;
}

/**
 * Key B: one 2xx. Key A: a 2xx, getPet twice (a 2xx and a 404), a bad query (4xx), then on past the
 * account's limit until the 429s turn into a ban. Each answer is counted in `live` under its outcome.
 */
export async function makeTraffic(
  target: HttpTarget,
  keys: { readonly keyA: IssuedKey; readonly keyB: IssuedKey },
  live: OutcomeCounts,
): Promise<void> {
  const { keyA, keyB } = keys;
  const send = async (path: string, options: HttpRequest): Promise<HttpAnswer> => {
    const answer = await request(target, path, options);
    live[outcomeOf(answer)] += 1;
    return answer;
  };
  assert.equal((await send('/v1/pets', { key: keyB.key })).status, 200);
  const created = await send('/v1/pets', {
    method: 'POST',
    key: keyA.key,
    json: { name: 'Console', categoryId: 1, status: 'available' },
  });
  assert.equal(created.status, 201, created.text);
  const { id } = created.json<{ id: number }>();
  assert.equal((await send(`/v1/pets/${id}`, { key: keyA.key })).status, 200);
  assert.equal((await send('/v1/pets/999999999', { key: keyA.key })).status, 404);
  assert.equal((await send('/v1/pets?limit=0', { key: keyA.key })).status, 400);
  const outcomes: UsageOutcome[] = [];
  for (let sent = 0; sent < 20 && outcomes.at(-1) !== 'banned'; sent += 1)
    outcomes.push(outcomeOf(await send('/v1/pets', { key: keyA.key })));
  assert.ok(outcomes.includes('429'), `429s came first: ${outcomes.join(', ')}`);
  assert.equal(outcomes.at(-1), 'banned', `then the ban: ${outcomes.join(', ')}`);
  const usage = await send('/v1/usage', { key: keyA.key });
  assert.notEqual(usage.json<{ key: { ban: unknown } }>().key.ban, null, 'key A is banned');
}

/**
 * Waits until the admin API counts every request made: the tally counts an answer once it is sent,
 * so the last one may reach the client first.
 */
export async function untilAdminCounts(
  operatorDirect: string,
  token: string,
  expectedSince: (from: number) => OutcomeCounts,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  const from = new Date(Date.now() - 7 * DAY_MS).toISOString();
  for (;;) {
    const answer = await fetch(`${operatorDirect}/admin/v1/usage/history?granularity=hour&from=${from}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await answer.json()) as { from: string; points: { outcome: UsageOutcome; count: number }[] };
    const expected = expectedSince(Date.parse(body.from));
    const counted = outcomeCounts();
    for (const point of body.points) counted[point.outcome] += point.count;
    if (USAGE_OUTCOMES.every((outcome) => counted[outcome] === expected[outcome])) return;
    assert.ok(Date.now() < deadline, `counted ${JSON.stringify(counted)}, not ${JSON.stringify(expected)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
