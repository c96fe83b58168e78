import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { FuzzAnswer, FuzzRequest } from './fuzz-cases.ts';

/**
 * The fuzz model's sender: one request on a fresh connection, written as generated (node:http where
 * it writes the request unchanged, the request line rewritten or a bare socket where it would not),
 * and the whole answer read.
 */

/** Methods node:http would change (upper-case) or refuse, and paths it refuses, go into the request line directly. */
function needsWireMethod(method: string, path: string): boolean {
  return method === 'CONNECT' || !/^[A-Z-]+$/.test(method) || /[^\x21-\xff]/.test(path);
}

/**
 * node:http upper-cases methods and refuses some tokens; the request line is rewritten in the
 * first write on the socket so the server sees the method exactly as generated.
 */
function rewriteRequestLine(socket: Socket, method: string, path: string): Socket {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let first = true;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!first) return write(chunk, ...rest);
    first = false;
    const data = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('latin1');
    const rewritten = data.replace(/^[^\r\n]*/, `${method} ${path} HTTP/1.1`);
    const encoding = typeof rest[0] === 'string' ? rest.slice(1) : rest;
    return write(rewritten, 'latin1', ...encoding);
  }) as Socket['write'];
  return socket;
}

export class NoAnswerError extends Error {}

/** Sends one request on a fresh connection and reads the whole answer, or rejects after `timeoutMs`. */
export function sendFuzzRequest(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  const { hostname, port } = new URL(baseUrl);
  if (fuzz.method === 'HEAD') return sendHeadRequest(hostname, Number(port), fuzz, timeoutMs);
  const wire = needsWireMethod(fuzz.method, fuzz.path);
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: hostname,
      port: Number(port),
      method: wire ? 'GET' : fuzz.method,
      path: wire ? '/' : fuzz.path,
      headers: withLength(fuzz),
      // Without an agent, node:http uses createConnection; with agent: false it would ignore it.
      agent: wire ? undefined : false,
      createConnection: wire
        ? () => rewriteRequestLine(connect(Number(port), hostname), fuzz.method, fuzz.path)
        : undefined,
    });
    const timer = setTimeout(() => {
      request.destroy(new NoAnswerError(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error instanceof NoAnswerError ? error : new NoAnswerError(`no answer: ${error.message}`));
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        request.destroy();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) });
      });
    });
    // A server may answer before the body is sent (401, 413) and close: that write error is not a failure.
    request.on('socket', (socket) => socket.on('error', () => undefined));
    request.end(fuzz.body === undefined ? undefined : Buffer.from(fuzz.body));
  });
}

/** node:http sends a GET or DELETE body without Content-Length, which the server would read as a second request. */
function withLength(fuzz: FuzzRequest): Record<string, string | string[]> {
  const headers = { ...fuzz.headers } as Record<string, string | string[]>;
  if (fuzz.body !== undefined && headers['transfer-encoding'] === undefined) {
    headers['content-length'] = String(fuzz.body.length);
  }
  return headers;
}

/**
 * HEAD goes over a bare socket, read until the server closes it: its status, and as its body
 * whatever follows the final answer's head, which must be nothing (node:http's client would take
 * such bytes for a broken answer rather than show them).
 */
function sendHeadRequest(host: string, port: number, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => socket.end(headRequestBytes(fuzz, `${host}:${port}`)));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new NoAnswerError(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const statuses = [...raw.toString('latin1').matchAll(/^HTTP\/1\.[01] (\d{3})/gm)];
      const final = statuses.find((match) => Number(match[1]) >= 200);
      if (final === undefined) return reject(new NoAnswerError('no answer: the connection closed without a status'));
      const headEnd = raw.indexOf('\r\n\r\n', final.index);
      const body = headEnd < 0 ? Buffer.alloc(0) : raw.subarray(headEnd + 4);
      resolve({ status: Number(final[1]), headers: {}, body });
    });
  });
}

function headRequestBytes(fuzz: FuzzRequest, defaultHost: string): Buffer {
  const lines = [`HEAD ${fuzz.path} HTTP/1.1`];
  const headers: Record<string, string | readonly string[]> = { host: defaultHost, ...fuzz.headers };
  for (const [name, value] of Object.entries(headers)) {
    for (const one of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${one}`);
  }
  lines.push('connection: close');
  const body = fuzz.body === undefined ? Buffer.alloc(0) : Buffer.from(fuzz.body);
  const chunked = typeof headers['transfer-encoding'] === 'string';
  if (chunked) {
    const chunk = body.length === 0 ? '' : `${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n`;
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${chunk}0\r\n\r\n`, 'latin1');
  }
  if (fuzz.body !== undefined) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}
