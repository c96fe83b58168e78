import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import {
  DEPRECATION_WARNING_TYPE,
  PetstoreClient,
  PetstoreError,
  type Fetch,
  type PetstoreClientOptions,
  type Sleep,
} from '@petstore/client';
import type { ManualClock } from '../support/manual-clock.ts';

/** What the front does with one request: pass it on, answer 503 itself, drop the connection, or never answer. */
export type FrontAction = 'forward' | 'unavailable' | 'drop-before' | 'drop-after' | 'hang';

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly requestId: string | undefined;
  readonly userAgent: string | undefined;
  readonly ifNoneMatch: string | undefined;
  readonly action: FrontAction;
  /** The app's answer, for requests the front passed on. */
  readonly upstreamStatus?: number;
  readonly replayed?: boolean;
}

export interface FlakyFront {
  /** The front's base URL, ending in /v1. */
  readonly baseUrl: string;
  readonly seen: readonly SeenRequest[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

function readBody(incoming: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(Buffer.concat(chunks)));
    incoming.on('error', reject);
  });
}

async function passOn(upstream: string, incoming: IncomingMessage, body: Buffer): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (!HOP_BY_HOP.has(name) && typeof value === 'string') headers.set(name, value);
  }
  const init: RequestInit = { method: incoming.method ?? 'GET', headers };
  if (body.length > 0) init.body = body;
  return fetch(`${upstream}${incoming.url ?? '/'}`, init);
}

async function answer(outgoing: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') outgoing.setHeader(name, value);
  });
  outgoing.writeHead(response.status).end(body);
}

/**
 * A real HTTP server in front of the app that fails requests on purpose, in the order of `plan`
 * (then forwards every further request): a 503 of its own, a connection dropped before the app
 * sees the request, one dropped after the app has answered (the answer is lost, its effect is not),
 * or a request left unanswered until the front closes.
 */
export async function startFlakyFront(upstream: string, plan: readonly FrontAction[]): Promise<FlakyFront> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const action = plan[seen.length] ?? 'forward';
    const base = {
      method: incoming.method ?? '',
      path: incoming.url ?? '',
      idempotencyKey: incoming.headers['idempotency-key'] as string | undefined,
      requestId: incoming.headers['x-request-id'] as string | undefined,
      userAgent: incoming.headers['user-agent'],
      ifNoneMatch: incoming.headers['if-none-match'],
      action,
    };
    void readBody(incoming).then(async (body) => {
      if (action === 'hang') {
        seen.push(base);
        return;
      }
      if (action === 'drop-before') {
        seen.push(base);
        return incoming.socket.destroy();
      }
      if (action === 'unavailable') {
        seen.push(base);
        const error = { code: 'service_unavailable', message: 'storage is unavailable (front)', status: 503 };
        return outgoing.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify(error));
      }
      const response = await passOn(upstream, incoming, body);
      const replayed = response.headers.get('idempotent-replayed') === 'true';
      seen.push({ ...base, upstreamStatus: response.status, replayed });
      if (action === 'drop-after') {
        await response.arrayBuffer();
        return incoming.socket.destroy();
      }
      return answer(outgoing, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A client of the API a test app serves under /v1, with `apiKey` and whatever else the test sets. */
export function clientOf(
  app: { readonly url: string },
  apiKey: string,
  options: Omit<PetstoreClientOptions, 'baseUrl' | 'apiKey'> = {},
): PetstoreClient {
  return new PetstoreClient({ baseUrl: `${app.url}/v1`, apiKey, ...options });
}

/** What `call` rejects with; fails the test, saying `passed`, when it resolves. */
export function rejection(call: Promise<unknown>, passed = 'the call passed'): Promise<unknown> {
  return call.then(
    () => assert.fail(passed),
    (caught: unknown) => caught,
  );
}

/** The PetstoreError `call` rejects with; fails the test when it resolves or rejects with anything else. */
export async function petstoreErrorOf(call: Promise<unknown>): Promise<PetstoreError> {
  const error = await rejection(call);
  assert.ok(error instanceof PetstoreError, `a PetstoreError, got ${String(error)}`);
  assert.ok(error instanceof Error);
  return error;
}

/** A fetch that records each request's headers and each answer's status and X-Request-Id, then calls the real fetch. */
export interface RecordingFetch {
  readonly fetch: Fetch;
  readonly requests: Array<{ readonly url: string; readonly headers: Headers }>;
  readonly requestIds: Array<string | null>;
  readonly statuses: number[];
}

export function recordingFetch(): RecordingFetch {
  const requests: RecordingFetch['requests'] = [];
  const requestIds: Array<string | null> = [];
  const statuses: number[] = [];
  return {
    requests,
    requestIds,
    statuses,
    async fetch(input, init) {
      requests.push({ url: String(input), headers: new Headers(init?.headers) });
      const response = await fetch(input, init);
      requestIds.push(response.headers.get('x-request-id'));
      statuses.push(response.status);
      return response;
    },
  };
}

/** A sleep that records the delays asked for and returns at once, after `onSleep` (e.g. moving the clock). */
export interface RecordingSleep {
  readonly sleep: Sleep;
  readonly delays: number[];
}

export function recordingSleep(onSleep: (ms: number) => void = () => undefined): RecordingSleep {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms) => {
      delays.push(ms);
      onSleep(ms);
    },
  };
}

/**
 * The client's clock and sleep on the app's manual clock: a sleep returns at once, having moved the clock by
 * its delay. Sleeps that start together (calls waiting for the same reset) move it once, as real time would.
 */
export function manualTime(clock: ManualClock): {
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly delays: number[];
} {
  const delays: number[] = [];
  return {
    delays,
    now: () => clock.now(),
    sleep: (ms) => {
      delays.push(ms);
      const until = clock.now() + ms;
      return new Promise((resolve) =>
        setImmediate(() => {
          if (clock.now() < until) clock.set(until);
          resolve();
        }),
      );
    },
  };
}

export interface DeprecationWarnings {
  /** Every deprecation warning of the client this process gave while the suite ran. */
  readonly warnings: readonly Error[];
  /** The first one, once given: the client gives it once its read of the account's usage has answered. */
  first(): Promise<Error>;
}

/** Gathers the client's deprecation warnings from a `before` hook of the suite to an `after` hook. */
export function deprecationWarningsOfSuite(): DeprecationWarnings {
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => {
    if (warning.name === DEPRECATION_WARNING_TYPE) warnings.push(warning);
  };
  before(() => {
    process.on('warning', onWarning);
  });
  after(() => {
    process.off('warning', onWarning);
  });
  return {
    warnings,
    async first() {
      for (let turn = 0; turn < 500 && warnings.length === 0; turn += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const [warning] = warnings;
      assert.ok(warning, 'a deprecation warning within 5 s');
      return warning;
    },
  };
}
