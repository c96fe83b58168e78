import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { sendError } from '../http/error-body.ts';
import { quoted } from '../http/quote.ts';
import { hostNameOfHeader } from '../net/host-names.ts';

export interface ListenerEdgesOptions {
  /** The host names the listener answers (net/host-names.ts, servedHostNames), canonical. */
  readonly hostNames: ReadonlySet<string>;
}

/**
 * The operator listener's own edges, before any of its steps or routes:
 * - It answers only the host names it serves. A page of another site whose name was made to resolve
 *   to this listener (DNS rebinding) sends that name as Host, and gets `400 invalid_host` and nothing
 *   else: neither /metrics nor a login. An HTTP/1.1 request without Host is refused alike; HTTP/1.0
 *   has none to send.
 * - Every answer carries `X-Content-Type-Options: nosniff`: no browser takes an admin answer (an
 *   Error body among them) for anything but what its Content-Type says.
 */
export const listenerEdges = fastifyPlugin<ListenerEdgesOptions>(
  async (app: FastifyInstance, { hostNames }: ListenerEdgesOptions) => {
    app.addHook('onRequest', (request, reply, done) => {
      const host = request.headers.host;
      if (host === undefined) {
        if (request.raw.httpVersion === '1.0') return done();
        // Answered here: a callback hook that sends does not call done().
        sendError(reply, 'invalid_host', 'a request must name its host in a Host header');
        return;
      }
      if (hostNames.has(hostNameOfHeader(host) ?? '')) return done();
      sendError(
        reply,
        'invalid_host',
        `this listener does not serve the host ${quoted(host)}: use its address, a loopback name, ` +
          'or a name listed in OPERATOR_HOSTS',
      );
    });
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('x-content-type-options', 'nosniff');
      done(null, payload);
    });
  },
  { name: 'operator-listener-edges' },
);
