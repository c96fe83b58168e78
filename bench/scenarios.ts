import type autocannon from 'autocannon';

export const SCENARIO_NAMES = ['list', 'get', 'post'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** One request shape, run against the service and against the bare server with the same settings. */
export interface Scenario {
  readonly name: ScenarioName;
  readonly title: string;
  /** Lowest acceptable service/bare throughput ratio. */
  readonly target: number;
  readonly method: 'GET' | 'POST';
  /** The path of one representative request, used to fetch the body the bare server will send. */
  readonly samplePath: string;
  readonly body: string | undefined;
  /** How the bare server recognises this scenario's requests. */
  readonly barePathPrefix: string;
  /** The request sequence autocannon sends. */
  requests(): autocannon.Request[];
  /** Adjusts each connection, e.g. to give it its own order of requests. */
  readonly setupClient: ((client: autocannon.Client) => void) | undefined;
}

/** Distinct pet ids requested in turn by the get scenario; prebuilt, so the load generator stays cheap. */
const GET_SEQUENCE_LENGTH = 1000;

export const POST_BODY = JSON.stringify({ name: 'Bench', categoryId: 42, status: 'available' });

export function buildScenarios(names: readonly ScenarioName[], petIds: { first: number; last: number }): Scenario[] {
  const span = petIds.last - petIds.first + 1;
  const middle = petIds.first + Math.floor(span / 2);
  const getSequence: autocannon.Request[] = Array.from({ length: Math.min(GET_SEQUENCE_LENGTH, span) }, () => ({
    method: 'GET',
    path: `/v1/pets/${petIds.first + Math.floor(Math.random() * span)}`,
  }));
  const all: Record<ScenarioName, Scenario> = {
    list: {
      name: 'list',
      title: 'GET /v1/pets?limit=20',
      target: 0.5,
      method: 'GET',
      samplePath: '/v1/pets?limit=20',
      body: undefined,
      barePathPrefix: '/v1/pets',
      requests: () => [{ method: 'GET', path: '/v1/pets?limit=20' }],
      setupClient: undefined,
    },
    get: {
      name: 'get',
      title: 'GET /v1/pets/{id}',
      target: 0.5,
      method: 'GET',
      samplePath: `/v1/pets/${middle}`,
      body: undefined,
      barePathPrefix: '/v1/pets/',
      // A different seeded pet on every request, so the benchmark does not read one hot row. The
      // requests are built once (a setupRequest would rebuild each one, taxing the load generator),
      // and every connection starts at its own place in the sequence. autocannon stores the built
      // bytes (with its own target's address) on the request objects; it deep-copies `requests` for
      // each connection, but not what setRequests is given, so those are copied here.
      requests: () => getSequence,
      setupClient: (client) => {
        const offset = Math.floor(Math.random() * getSequence.length);
        client.setRequests(
          [...getSequence.slice(offset), ...getSequence.slice(0, offset)].map((request) => ({ ...request })),
        );
      },
    },
    post: {
      name: 'post',
      title: 'POST /v1/pets',
      target: 0.2,
      method: 'POST',
      samplePath: '/v1/pets',
      body: POST_BODY,
      barePathPrefix: '/v1/pets',
      requests: () => [
        { method: 'POST', path: '/v1/pets', body: POST_BODY, headers: { 'content-type': 'application/json' } },
      ],
      setupClient: undefined,
    },
  };
  return names.map((name) => all[name]);
}
