import { readFileSync } from 'node:fs';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { servePublicDocument } from './cache-control.ts';
import { DOCS_PREFIX } from './document-paths.ts';

export const DOCS_TITLE = 'Pet store API — reference';

/**
 * The page's own start-up script (browser JavaScript, served as is). It replaces the one
 * @fastify/swagger-ui generates so that the page can carry a plugin without inline script.
 */
const INITIALIZER = readFileSync(new URL('./docs-page-initializer.js', import.meta.url), 'utf8');

/**
 * The page loads everything from its own origin. Unlike @fastify/swagger-ui's `staticCSP: true`
 * this has no `upgrade-insecure-requests`, which made browsers fetch the assets over https and left
 * the page blank on any plain-HTTP host but localhost. "Try it out" calls the server URL of the
 * document: the page's origin, or PUBLIC_BASE_URL's when set.
 */
export function docsContentSecurityPolicy(publicBaseUrl: string): string {
  const apiOrigin = publicBaseUrl === '' ? '' : ` ${new URL(publicBaseUrl).origin}`;
  return [
    "default-src 'self'",
    "base-uri 'self'",
    `connect-src 'self'${apiOrigin}`,
    "font-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self'",
  ].join('; ');
}

/** The reference page at /docs, over the document registered by @fastify/swagger. */
export async function registerDocsPage(app: FastifyInstance, options: { publicBaseUrl: string }): Promise<void> {
  serveOwnInitializer(app);
  // The page and its assets are public documents, cacheable like the API document.
  app.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) servePublicDocument(route);
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    theme: { title: DOCS_TITLE },
    staticCSP: docsContentSecurityPolicy(options.publicBaseUrl),
  });
}

function serveOwnInitializer(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.url !== `${DOCS_PREFIX}/static/swagger-initializer.js`) return;
    route.handler = async (_request, reply) =>
      reply.header('content-type', 'application/javascript; charset=utf-8').send(INITIALIZER);
  });
}
