import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * The baseline: a bare node:http server that answers with pre-serialised bodies of the same size
 * as the service's answers, so the ratio service/bare measures what the service adds on top of
 * Node's HTTP stack. BARE_RESPONSES names a JSON file of `BareResponse`s; a request gets the first
 * one whose method and path prefix match (the last one is the fallback). No logging, no parsing.
 */
export interface BareResponse {
  readonly method: string;
  readonly pathPrefix: string;
  readonly statusCode: number;
  readonly body: string;
}

interface PreparedResponse {
  readonly method: string;
  readonly pathPrefix: string;
  readonly statusCode: number;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

function prepare(responses: readonly BareResponse[]): PreparedResponse[] {
  return responses.map((response) => {
    const body = Buffer.from(response.body, 'utf8');
    return {
      method: response.method,
      pathPrefix: response.pathPrefix,
      statusCode: response.statusCode,
      body,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    };
  });
}

function main(): void {
  const file = process.env['BARE_RESPONSES'];
  const port = Number(process.env['PORT'] ?? '0');
  const host = process.env['HOST'] ?? '127.0.0.1';
  if (!file) {
    process.stderr.write('bare-server: BARE_RESPONSES (a JSON file of responses) is required\n');
    process.exit(2);
  }
  const responses = prepare(JSON.parse(readFileSync(file, 'utf8')) as BareResponse[]);
  const fallback = responses[responses.length - 1];
  if (!fallback) {
    process.stderr.write('bare-server: BARE_RESPONSES lists no response\n');
    process.exit(2);
  }
  const server = createServer({ keepAliveTimeout: 72_000 }, (request, response) => {
    const url = request.url ?? '/';
    const chosen =
      responses.find((candidate) => candidate.method === request.method && url.startsWith(candidate.pathPrefix)) ??
      fallback;
    // Answer once the request body (POST) has been read, as the service must.
    request.resume();
    request.once('end', () => {
      response.writeHead(chosen.statusCode, chosen.headers);
      response.end(chosen.body);
    });
  });
  server.listen(port, host);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    });
  }
}

if (import.meta.main) main();
