import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { sendError } from '../http/error-body.ts';
import { quoted } from '../http/quote.ts';
import { hostNameOfHeader, requestHost } from '../net/host-names.ts';

export interface ListenerEdgesOptions {
  /** The host names the listener answers (net/host-names.ts, servedHostNames), canonical. */
  readonly hostNames: ReadonlySet<string>;
}

/**
 * The operator listener's own edges, before any of its steps or routes:
 * - It answers only the host names it serves. A page of another site whose name was made to resolve
 *   to this listener (DNS rebinding) sends that name as Host, and gets `400 invalid_host` and nothing
 *   else: neither /metrics nor a login. The host is the target's authority when the target is in
 *   absolute form (`GET http://host/metrics`), as RFC 9112 says. A request without any (HTTP/1.0
 *   may send none) is served; one whose Host is missing in HTTP/1.1, repeated or malformed never
 *   gets here (the core's protocol edges refuse it).
 * - Every answer carries `X-Content-Type-Options: nosniff`: no browser takes an admin answer (an
 *   Error body among them) for anything but what its Content-Type says.
 */
export const listenerEdges = fastifyPlugin<ListenerEdgesOptions>(
  async (app: FastifyInstance, { hostNames }: ListenerEdgesOptions) => {
    app.addHook('onRequest', (request, reply, done) => {
      const host = requestHost(request.raw);
      if (host === undefined || hostNames.has(hostNameOfHeader(host) ?? '')) return done();
      // Answered here: a callback hook that sends does not call done().
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
