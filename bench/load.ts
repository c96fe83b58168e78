import autocannon from 'autocannon';
import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunFigures } from './report.ts';
import type { ScenarioName } from './settings.ts';

/** A server to load: its address, its API key (none for the bare server) and its seeded pet ids, ascending. */
export interface LoadTarget {
  readonly name: string;
  readonly url: string;
  readonly key: string | undefined;
  readonly petIds: readonly string[];
  /** The CPU time its process has used so far, in seconds, where it can be read. */
  readonly cpuSeconds?: () => number | undefined;
}

export interface Scenario {
  /** How the report names it: the method and the path with its trailing id as `{id}`, and what sets it apart. */
  readonly title: string;
  readonly name: ScenarioName;
  /** The requests sent to a target with these pet ids; the first is the sample whose answer the bare server sends. */
  readonly requests: (petIds: readonly string[]) => autocannon.Request[];
}

export const POST_BODY = JSON.stringify({ name: 'Bench', categoryId: 42, status: 'available' });

/**
 * Draws of a Zipf-skewed workload: this many requests, one id each, from a fixed seed. The list repeats, so
 * it must be long enough to reach the tail: 100,000 draws over 10,000 pets touch about 8,500 of them
 * (10,000 touched fewer than 3,000, all of which the service's pet cache holds).
 */
const ZIPF_DRAWS = 100_000;
const ZIPF_EXPONENT = 1;
const ZIPF_SEED = 0x5eed;

export function buildScenarios<N extends ScenarioName>(names: readonly N[], petCount: number) {
  // A different seeded pet per request (not one hot row), in one order for every target: positions in its ids.
  const positions = Array.from({ length: Math.min(1000, petCount) }, () => Math.floor(Math.random() * petCount));
  const zipf = zipfPositions(petCount, ZIPF_DRAWS, ZIPF_EXPONENT, ZIPF_SEED);
  const post: autocannon.Request = {
    method: 'POST',
    path: '/v1/pets',
    body: POST_BODY,
    headers: { 'content-type': 'application/json' },
  };
  const getAt =
    (chosen: readonly number[]) =>
    (ids: readonly string[]): autocannon.Request[] =>
      chosen.map((position) => ({ method: 'GET', path: `/v1/pets/${ids[position] ?? 0}` }));
  const all: Record<ScenarioName, Scenario> = {
    list: {
      name: 'list',
      title: 'GET /v1/pets?limit=20',
      requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
    },
    get: { name: 'get', title: 'GET /v1/pets/{id}', requests: getAt(positions) },
    // Every seeded pet in turn, as a client walking the whole catalogue: no id comes back before all others did.
    'get-all': {
      name: 'get-all',
      title: 'GET /v1/pets/{id}, every id in turn',
      requests: (ids) => ids.map((id) => ({ method: 'GET', path: `/v1/pets/${id}` })),
    },
    'get-zipf': { name: 'get-zipf', title: 'GET /v1/pets/{id}, Zipf-skewed ids', requests: getAt(zipf) },
    post: { name: 'post', title: 'POST /v1/pets', requests: () => [post] },
  };
  return names.map((name) => all[name] as Scenario & { readonly name: N });
}

/** mulberry32: a small seeded generator of uniform numbers in [0, 1), so that every run draws the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `draws` positions in [0, `count`), the item of popularity rank k drawn with probability ∝ 1/k^`exponent`
 * (Zipf). The ranks are dealt to positions by a seeded shuffle, so the popular pets are scattered over
 * the store rather than its first ids; the same seed gives the same list.
 */
export function zipfPositions(count: number, draws: number, exponent: number, seed: number): number[] {
  const random = seededRandom(seed);
  const cumulative = new Float64Array(count);
  let total = 0;
  for (let rank = 0; rank < count; rank += 1) cumulative[rank] = total += 1 / (rank + 1) ** exponent;
  const positionOfRank = Array.from({ length: count }, (_, index) => index);
  for (let index = count - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [positionOfRank[index], positionOfRank[other]] = [positionOfRank[other] as number, positionOfRank[index] as number];
  }
  return Array.from({ length: draws }, () => {
    const target = random() * total;
    let [low, high] = [0, count - 1];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) < target) low = middle + 1;
      else high = middle;
    }
    return positionOfRank[low] as number;
  });
}

export interface LoadResult extends RunFigures {
  /** Non-2xx responses, connection errors and timeouts, described; empty when all went well. */
  readonly problems: readonly string[];
}

/**
 * Loads one target with autocannon for `seconds`, every request with `acceptEncoding` when given.
 * The window opens once autocannon has built its requests; latency comes from each response's own
 * timing, in microseconds (autocannon's own histogram counts whole milliseconds, too coarse for
 * 1 ms answers). The target's CPU time over the same window, divided by the responses counted in it,
 * is what a request costs its process, whatever share of the machine the load generator took.
 */
export async function measure(
  target: LoadTarget,
  scenario: Scenario,
  connections: number,
  seconds: number,
  acceptEncoding?: string,
) {
  const requests = scenario.requests(target.petIds);
  const headers: Record<string, string> = target.key === undefined ? {} : { authorization: `Bearer ${target.key}` };
  if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
  const { promise, resolve, reject } = Promise.withResolvers<autocannon.Result>();
  let dealt = 0;
  const instance = autocannon(
    {
      url: target.url,
      connections,
      duration: seconds + 60,
      headers,
      // Each connection builds its requests' bytes up front: the options' list only for its first moment.
      requests: requests.slice(0, 1),
      // The connections deal the sequence out: connection k sends requests k, k + connections, k + 2 × connections…,
      // so that together they go through it in order, however long it is (building all of it for each of
      // them took seconds for 10,000 requests). setRequests keeps the objects it is given: each gets copies.
      setupClient: (client) => {
        const k = dealt++;
        const share =
          requests.length <= connections
            ? [requests[k % requests.length] as autocannon.Request]
            : requests.filter((_, index) => index % connections === k % connections);
        client.setRequests(share.map((request) => ({ ...request })));
      },
    },
    (error: unknown, result) => (error ? reject(new Error(String(error))) : resolve(result)),
  );
  const latencyMicros = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  let [counting, non2xx] = [true, 0];
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (!counting) return;
    latencyMicros.record(Math.max(1, Math.round(responseTime * 1000)));
    if (statusCode < 200 || statusCode > 299) non2xx += 1;
  });
  const [started, cpuAtStart] = [performance.now(), target.cpuSeconds?.()];
  await sleep(seconds * 1000);
  counting = false;
  const [elapsedSeconds, cpuAtEnd] = [(performance.now() - started) / 1000, target.cpuSeconds?.()];
  instance.stop();
  const { errors, timeouts } = await promise;
  const problems = [
    non2xx > 0 ? `${non2xx} non-2xx responses` : '',
    errors > 0 ? `${errors} connection errors (${timeouts} timeouts)` : '',
    latencyMicros.count === 0 ? 'no responses' : '',
  ].filter(Boolean);
  const [p50Ms, p99Ms] = [latencyMicros.percentile(50) / 1000, latencyMicros.percentile(99) / 1000];
  const cpuMicrosPerRequest =
    cpuAtStart === undefined || cpuAtEnd === undefined || latencyMicros.count === 0
      ? undefined
      : ((cpuAtEnd - cpuAtStart) * 1e6) / latencyMicros.count;
  const requestsPerSecond = latencyMicros.count / elapsedSeconds;
  return { requestsPerSecond, p50Ms, p99Ms, cpuMicrosPerRequest, problems } satisfies LoadResult;
}
