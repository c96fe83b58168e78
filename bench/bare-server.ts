import { createServer } from 'node:http';

/** A fixed answer of the bare server: the first whose method and path prefix match a request is sent. */
export interface BareResponse {
  readonly method: string;
  readonly pathPrefix: string;
  readonly status: number;
  readonly body: string;
}

/**
 * The reference: node:http answering pre-serialised bodies as large as the service's, with no
 * routing, validation, storage or logging, so service/bare is what the service adds to Node's HTTP
 * stack. Run as a child process (BARE_RESPONSES holds the JSON list, PORT and HOST the address).
 */
function main(): void {
  const responses = (JSON.parse(process.env['BARE_RESPONSES'] ?? '[]') as BareResponse[]).map((response) => {
    const body = Buffer.from(response.body);
    const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };
    return { ...response, body, headers };
  });
  const server = createServer((request, reply) => {
    const url = request.url ?? '/';
    const chosen =
      responses.find((response) => response.method === request.method && url.startsWith(response.pathPrefix)) ??
      responses.at(-1);
    // The service reads a POST's body before it answers, so the reference does too.
    request.resume();
    request.once('end', () => {
      if (chosen === undefined) reply.writeHead(404).end();
      else reply.writeHead(chosen.status, chosen.headers).end(chosen.body);
    });
  });
  server.listen(Number(process.env['PORT']), process.env['HOST'] ?? '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.main) main();
