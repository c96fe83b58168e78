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
}

export interface Scenario {
  readonly name: ScenarioName;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  /** The request whose answer the bare server sends back for this scenario. */
  readonly samplePath: (petIds: readonly string[]) => string;
  readonly barePathPrefix: string;
  readonly requests: (petIds: readonly string[]) => autocannon.Request[];
}

export const POST_BODY = JSON.stringify({ name: 'Bench', categoryId: 42, status: 'available' });
const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The get scenario asks for a different seeded pet each time (not one hot row), in an order drawn
 * once and used for every target: positions in the ascending id list, since ids may differ by target.
 */
function getScenario(petCount: number): Scenario {
  const positions = Array.from({ length: Math.min(1000, petCount) }, () => Math.floor(Math.random() * petCount));
  return {
    name: 'get',
    title: 'GET /v1/pets/{id}',
    method: 'GET',
    samplePath: (ids) => `/v1/pets/${ids[Math.floor(ids.length / 2)] ?? ''}`,
    barePathPrefix: '/v1/pets/',
    requests: (ids) => positions.map((position) => ({ method: 'GET', path: `/v1/pets/${ids[position] ?? ''}` })),
  };
}

export function buildScenarios(names: readonly ScenarioName[], petCount: number): Scenario[] {
  const all: Record<ScenarioName, Scenario> = {
    list: {
      name: 'list',
      title: 'GET /v1/pets?limit=20',
      method: 'GET',
      samplePath: () => '/v1/pets?limit=20',
      barePathPrefix: '/v1/pets',
      requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
    },
    get: getScenario(petCount),
    post: {
      name: 'post',
      title: 'POST /v1/pets',
      method: 'POST',
      samplePath: () => '/v1/pets',
      barePathPrefix: '/v1/pets',
      requests: () => [{ method: 'POST', path: '/v1/pets', body: POST_BODY, headers: JSON_HEADERS }],
    },
  };
  return names.map((name) => all[name]);
}

export interface LoadResult extends RunFigures {
  /** Non-2xx responses, connection errors and timeouts, described; empty when all went well. */
  readonly problems: readonly string[];
}

/**
 * Loads one target with autocannon for `seconds`. Figures come from a window that opens once
 * autocannon has built its requests, and latency from each response's own timing, at microsecond
 * resolution (autocannon's own histogram counts whole milliseconds, too coarse for 1 ms answers).
 */
export async function measure(
  target: LoadTarget,
  scenario: Scenario,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const requests = scenario.requests(target.petIds);
  const { promise, resolve, reject } = Promise.withResolvers<autocannon.Result>();
  const instance = autocannon(
    {
      url: target.url,
      connections,
      duration: seconds + 60,
      headers: target.key === undefined ? {} : { authorization: `Bearer ${target.key}` },
      requests,
      // Each connection starts at its own place in the sequence; setRequests keeps the objects it is given.
      setupClient: (client) => {
        const offset = Math.floor(Math.random() * requests.length);
        client.setRequests(
          [...requests.slice(offset), ...requests.slice(0, offset)].map((request) => ({ ...request })),
        );
      },
    },
    (error: unknown, result) =>
      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result),
  );
  const latencyMicros = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  let counting = true;
  let non2xx = 0;
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (!counting) return;
    latencyMicros.record(Math.max(1, Math.round(responseTime * 1000)));
    if (statusCode < 200 || statusCode > 299) non2xx += 1;
  });
  const started = performance.now();
  await sleep(seconds * 1000);
  counting = false;
  const elapsedSeconds = (performance.now() - started) / 1000;
  instance.stop();
  const result = await promise;
  const problems = [
    non2xx > 0 ? `${non2xx} non-2xx responses` : '',
    result.errors > 0 ? `${result.errors} connection errors (${result.timeouts} timeouts)` : '',
    latencyMicros.count === 0 ? 'no responses' : '',
  ].filter(Boolean);
  return {
    requestsPerSecond: latencyMicros.count / elapsedSeconds,
    p50Ms: latencyMicros.percentile(50) / 1000,
    p99Ms: latencyMicros.percentile(99) / 1000,
    problems,
  };
}
