import { connect } from 'node:net';

export interface RawExchangeOptions {
  /** How the answer's bytes become text; utf8 unless told. */
  readonly encoding?: BufferEncoding;
  /** Ends the client's side of the connection after this long, for a server still waiting for more. */
  readonly endAfterMs?: number;
}

/**
 * Writes `request` on a plain TCP connection to the host and port of `url`, where nothing pretends to
 * be a client of the API, and resolves with every byte the server sent once it closes the connection.
 * A reset after part of the answer still counts as the end of it.
 */
export function rawExchange(url: string, request: string | Buffer, options: RawExchangeOptions = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = options.endAfterMs === undefined ? undefined : setTimeout(() => socket.end(), options.endAfterMs);
    const received = (): string => Buffer.concat(chunks).toString(options.encoding ?? 'utf8');
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received());
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(received());
      else reject(error);
    });
    socket.write(request);
  });
}
