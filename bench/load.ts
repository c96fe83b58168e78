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
  /** Also how the bare server recognises its requests: the method and the path with its trailing id as `{id}`. */
  readonly title: string;
  readonly name: ScenarioName;
  /** The requests sent to a target with these pet ids; the first is the sample whose answer the bare server sends. */
  readonly requests: (petIds: readonly string[]) => autocannon.Request[];
}

export const POST_BODY = JSON.stringify({ name: 'Bench', categoryId: 42, status: 'available' });

export function buildScenarios(names: readonly ScenarioName[], petCount: number): Scenario[] {
  // A different seeded pet per request (not one hot row), in one order for every target: positions in its ids.
  const positions = Array.from({ length: Math.min(1000, petCount) }, () => Math.floor(Math.random() * petCount));
  const post: autocannon.Request = {
    method: 'POST',
    path: '/v1/pets',
    body: POST_BODY,
    headers: { 'content-type': 'application/json' },
  };
  const all: Record<ScenarioName, Scenario> = {
    list: {
      name: 'list',
      title: 'GET /v1/pets?limit=20',
      requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
    },
    get: {
      name: 'get',
      title: 'GET /v1/pets/{id}',
      requests: (ids) => positions.map((position) => ({ method: 'GET', path: `/v1/pets/${ids[position] ?? 0}` })),
    },
    post: { name: 'post', title: 'POST /v1/pets', requests: () => [post] },
  };
  return names.map((name) => all[name]);
}

export interface LoadResult extends RunFigures {
  /** Non-2xx responses, connection errors and timeouts, described; empty when all went well. */
  readonly problems: readonly string[];
}

/**
 * Loads one target with autocannon for `seconds`, every request with `acceptEncoding` when given.
 * The window opens once autocannon has built its requests; latency comes from each response's own
 * timing, in microseconds (autocannon's own histogram counts whole milliseconds, too coarse for
 * 1 ms answers).
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
  const instance = autocannon(
    {
      url: target.url,
      connections,
      duration: seconds + 60,
      headers,
      requests,
      // Each connection starts at its own place in the sequence; setRequests keeps the objects it is given.
      setupClient: (client) => {
        const offset = Math.floor(Math.random() * requests.length);
        client.setRequests(
          [...requests.slice(offset), ...requests.slice(0, offset)].map((request) => ({ ...request })),
        );
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
  const started = performance.now();
  await sleep(seconds * 1000);
  counting = false;
  const elapsedSeconds = (performance.now() - started) / 1000;
  instance.stop();
  const { errors, timeouts } = await promise;
  const problems = [
    non2xx > 0 ? `${non2xx} non-2xx responses` : '',
    errors > 0 ? `${errors} connection errors (${timeouts} timeouts)` : '',
    latencyMicros.count === 0 ? 'no responses' : '',
  ].filter(Boolean);
  const [p50Ms, p99Ms] = [latencyMicros.percentile(50) / 1000, latencyMicros.percentile(99) / 1000];
  return { requestsPerSecond: latencyMicros.count / elapsedSeconds, p50Ms, p99Ms, problems } satisfies LoadResult;
}
