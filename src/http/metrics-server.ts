import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { writeError } from './error-body.ts';
import { answerMalformedRequest, unsupportedExpectationMessage } from './plugins/protocol-edges.ts';

/** Longest a scrape's text is reused; far below any Prometheus scrape interval. */
export const METRICS_RENDER_INTERVAL_MS = 1000;

export interface MetricsServerOptions {
  readonly registry: Registry;
  readonly port: number;
  readonly host: string;
  /** Monotonic milliseconds; injected by tests to step over the render interval. */
  readonly now?: () => number;
}

export interface MetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  readonly url: string;
  /** How many times the registry has been rendered to text (once per interval at most). */
  renders(): number;
  close(): Promise<void>;
}

/**
 * The operator listener: GET /metrics in Prometheus text, on its own port, apart from the public
 * app. The text is rendered at most once per interval and shared by every scrape in between, so a
 * flood of scrapes costs one render a second rather than one per request.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const render = cachedRender(options.registry, options.now ?? (() => performance.now()));
  const contentType = options.registry.contentType;
  const server = createServer((request, response) => void answer(request, response, render.text, contentType));
  // Refusals Node would answer without the Error body, answered as the public listener answers them.
  server.on('clientError', answerMalformedRequest);
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    writeError(response, 'expectation_failed', unsupportedExpectationMessage(request.headers.expect)),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    renders: render.count,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A scraper's idle keep-alive connection must not hold the shutdown.
        server.closeIdleConnections();
      }),
  };
}

function cachedRender(registry: Registry, now: () => number): { text(): Promise<string>; count(): number } {
  let renders = 0;
  let renderedAt = Number.NEGATIVE_INFINITY;
  let latest: Promise<string> | undefined;
  return {
    count: () => renders,
    text() {
      const at = now();
      if (latest === undefined || at - renderedAt >= METRICS_RENDER_INTERVAL_MS) {
        renders += 1;
        renderedAt = at;
        // Concurrent scrapes share this promise, so a render in progress is never started twice.
        latest = registry.metrics();
        latest.catch(() => {
          latest = undefined;
        });
      }
      return latest;
    },
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  render: () => Promise<string>,
  contentType: string,
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics') return writeError(response, 'not_found', `no route for ${request.method} ${path}`);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    const message = `${request.method} is not allowed on /metrics; allowed: GET, HEAD`;
    return writeError(response, 'method_not_allowed', message, { fields: { Allow: 'GET, HEAD' } });
  }
  try {
    const text = await render();
    response.writeHead(200, {
      'content-type': contentType,
      'content-length': Buffer.byteLength(text),
    });
    response.end(request.method === 'HEAD' ? undefined : text);
  } catch {
    writeError(response, 'service_unavailable', 'the metrics could not be collected; retry the scrape');
  }
}
