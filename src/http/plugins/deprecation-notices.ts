import type { FastifyInstance, onSendHookHandler, RouteOptions } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { Metrics } from '../metrics.ts';
import { DOCS_PREFIX } from '../document-paths.ts';
import { appendOnSend } from '../route-hooks.ts';

export interface DeprecationNoticesOptions {
  /** Absolute origin for the link to the migration note; empty for a relative reference. */
  readonly publicBaseUrl: string;
  readonly metrics: Metrics;
}

/**
 * What a deprecated route (one whose config has `deprecation`) tells its callers: its answers carry
 * `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and a `rel="deprecation"` link to its entry on the
 * reference page; the document marks it deprecated; and each call of a known key is counted by
 * account. Register before the routes.
 */
export const deprecationNotices = fastifyPlugin<DeprecationNoticesOptions>(
  async (app: FastifyInstance, options: DeprecationNoticesOptions) => {
    app.addHook('onRoute', (route) => {
      if (route.config?.deprecation !== undefined) announceDeprecation(route, options);
    });
  },
  { name: 'deprecation-notices' },
);

function announceDeprecation(route: RouteOptions, { publicBaseUrl, metrics }: DeprecationNoticesOptions): void {
  const { deprecatedAt, sunsetAt } = route.config?.deprecation ?? {};
  if (deprecatedAt === undefined || sunsetAt === undefined) return;
  const schema = route.schema ?? {};
  route.schema = { ...schema, deprecated: true };
  const tag = Array.isArray(schema.tags) ? String(schema.tags[0]) : 'default';
  const anchor = `${tag}/${String(schema.operationId)}`;
  const deprecation = `@${Math.floor(deprecatedAt.getTime() / 1000)}`;
  const sunset = sunsetAt.toUTCString();
  const link = `<${publicBaseUrl}${DOCS_PREFIX}#/${anchor}>; rel="deprecation"; type="text/html"`;
  const notice: onSendHookHandler = (request, reply, payload, done) => {
    reply.header('deprecation', deprecation).header('sunset', sunset).header('link', link);
    if (request.principal) metrics.deprecatedCalls.inc({ account: request.principal.accountName });
    done(null, payload);
  };
  appendOnSend(route, notice);
}
