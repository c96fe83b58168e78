import type { Deprecation } from '../domain/deprecation.ts';
import type { KeyScope } from '../domain/scopes.ts';
import type { UsageOperation } from '../domain/usage.ts';

/**
 * What a route says of itself, in its `config`: the only place these facts are written. The steps
 * of a request read them from `request.routeOptions.config`; the 405s, the usage history and the
 * document follow from the routes registered, so nothing elsewhere lists paths.
 */
export interface RouteFacts {
  /** Served without credentials (documents, probes, the console's login page). */
  public?: boolean;
  /** A public document: its successful answers may be cached briefly (PUBLIC_DOCUMENT). */
  cacheable?: boolean;
  /**
   * The scope a key needs for the route: a key without it is answered 403 `insufficient_scope`,
   * after being counted (plugins/api-key-pipeline.ts); the document says so (plugins/key-scopes.ts).
   * Every route of the public API behind a key names one; `null` says, explicitly, that any valid
   * key will do (the 405s of a path).
   */
  scope?: KeyScope | null;
  /** What the usage history counts a request of a known key as; a route without one is not counted. */
  usage?: UsageOperation;
  /**
   * Not counted in the account's windows: the route has a small per-account limit of its own and
   * reports the account's standing (request.standing), even to a banned key.
   */
  reportsStanding?: boolean;
  /** Deprecated: answers carry Deprecation, Sunset and a link to the migration note; the document says so. */
  deprecation?: Deprecation;
}

declare module 'fastify' {
  // The route config is where Fastify keeps a route's own facts; declared once, here.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FastifyContextConfig extends RouteFacts {}
}
