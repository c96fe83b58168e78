import { createServer } from 'node:http';

/** What the bare server sends, by request shape: the method and the path with a trailing id as `{id}`. */
export type BareResponses = Record<string, { readonly status: number; readonly body: string }>;

export function requestShape(method: string, path: string): string {
  return `${method} ${path.replace(/\/\d+$/, '/{id}')}`;
}

/**
 * The reference: node:http answering pre-serialised bodies as large as the service's, with no
 * routing, validation, storage or logging, so service/bare is what the service adds to Node's HTTP
 * stack. Runs as a child process: BARE_RESPONSES holds the answers, PORT and HOST the address.
 */
function main(): void {
  const responses = new Map(
    Object.entries(JSON.parse(process.env['BARE_RESPONSES'] ?? '{}') as BareResponses).map(
      ([shape, { status, body }]) => {
        const bytes = Buffer.from(body);
        const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length) };
        return [shape, { status, bytes, headers }];
      },
    ),
  );
  const server = createServer((request, reply) => {
    const chosen = responses.get(requestShape(request.method ?? '', request.url ?? ''));
    // The service reads a POST's body before it answers, so the reference does too.
    request.resume().once('end', () => {
      if (chosen === undefined) reply.writeHead(404).end();
      else reply.writeHead(chosen.status, chosen.headers).end(chosen.bytes);
    });
  });
  server.listen(Number(process.env['PORT']), process.env['HOST']);
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.main) main();
