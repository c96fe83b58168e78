import { createServer } from 'node:http';

/**
 * What the bare server sends, by request shape (the method and the path with a trailing id as
 * `{id}`): the status, the body's bytes in base64 (compressed, when the service compressed it) and
 * their Content-Encoding.
 */
export type BareResponses = Record<
  string,
  { readonly status: number; readonly base64: string; readonly contentEncoding: string | undefined }
>;

export function requestShape(method: string, path: string): string {
  return `${method} ${path.replace(/\/\d+$/, '/{id}')}`;
}

/**
 * The reference: node:http answering pre-serialised bodies as large as the service's (the same
 * bytes, compressed as the service compressed them), with no routing, validation, storage or
 * logging, so service/bare is what the service adds to Node's HTTP stack. Runs as a child process:
 * BARE_RESPONSES holds the answers, PORT and HOST the address.
 */
function main(): void {
  const responses = new Map(
    Object.entries(JSON.parse(process.env['BARE_RESPONSES'] ?? '{}') as BareResponses).map(
      ([shape, { status, base64, contentEncoding }]) => {
        const bytes = Buffer.from(base64, 'base64');
        const headers: Record<string, string> = {
          'content-type': 'application/json; charset=utf-8',
          'content-length': String(bytes.length),
        };
        if (contentEncoding !== undefined) headers['content-encoding'] = contentEncoding;
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
