import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * How long a connection the service is done with stays open: long enough for an answer to reach a
 * client that is still sending (closing at once would reset the connection, and a reset can discard
 * an answer the client has not read yet), short enough that no client holds a socket, or a graceful
 * shutdown, by keeping its side open or sending on and on.
 */
export const LINGER_MS = 1000;

/**
 * Destroys a socket that has had its last answer once LINGER_MS has passed; the function returned
 * calls that off. end() alone only half-closes a socket: once Node's parser has given up on a request
 * nobody reads it again, so neither the client's close nor its silence would ever release it.
 */
export function destroyAfterLinger(socket: Duplex): () => void {
  if (socket.destroyed) return () => undefined;
  // Referenced: a graceful close waits for this socket, and must not see its process end first.
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  // A kept connection may see many refusals: each cancelled wait takes its listener with it.
  const cancel = (): void => {
    clearTimeout(linger);
    socket.removeListener('close', cancel);
  };
  socket.once('close', cancel);
  return cancel;
}

/**
 * For an answer given before the request's body had all arrived (a refusal before the body is
 * read): Node reads the rest of the body and throws it away, so that the connection can carry the
 * next request. That is allowed LINGER_MS once the answer is sent; a client still sending then
 * loses the connection instead of holding it for as long as it likes.
 */
export function closeUnlessBodyArrives(request: IncomingMessage): void {
  if (!bodyStillArriving(request)) return;
  request.once('end', destroyAfterLinger(request.socket));
}

/**
 * Whether a request announced a body (a length or chunks) that has not all arrived. A cheap test,
 * made on every refusal: only then is it worth watching the connection.
 */
export function bodyStillArriving(request: IncomingMessage): boolean {
  if (request.complete) return false;
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
