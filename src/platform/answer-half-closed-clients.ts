import type { Server } from 'node:http';

/**
 * Lets a client that half-closes its connection after sending a request (shutdown(SHUT_WR): a
 * `printf … | nc -N` health check, an HTTP/1.0-style script, some proxies) still get its answer.
 *
 * A workaround for the platform, nothing more: the HTTP core (src/http/core.ts) calls it once per
 * listener. It sets `httpAllowHalfOpen`, a property of node:http's Server that Node's documentation
 * does not describe. Left false, as Node leaves it, the client's FIN ends the connection at once, and
 * an answer still being prepared is lost: the client gets nothing. That is every answer that waits
 * for PostgreSQL or Redis, and on SQLite whatever waits for anything. With it set, Node marks the
 * answer in progress as the connection's last, sends it, and then closes. RFC 9112 §9.6: a
 * half-closed connection does not delimit a request, nor does it mean the client no longer wants an
 * answer.
 *
 * Checked on Node 24.21.0 on 2026-11-28 by test/platform/answer-half-closed-clients.test.ts: with it,
 * such clients get their answer on both storage backends. Without it, on PostgreSQL + Redis, a
 * half-closing client of `GET /v1/pets/{petId}` or `GET /readyz` got no answer. The fuzz campaign
 * with FUZZ_BACKEND=postgres lost 2,110 of 30,000 answers that way, every HEAD among them, since its
 * HEAD client half-closes. Removing the call leaves everything else working exactly the same. If a
 * Node release drops the property, the test says so.
 */
export function answerHalfClosedClients(server: Server): void {
  Object.assign(server, { httpAllowHalfOpen: true });
}
