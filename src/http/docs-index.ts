import type { FastifyInstance, RouteHandlerMethod } from 'fastify';

/**
 * @fastify/swagger-ui answers `/docs/static/index.html` with a bodiless 302 to `/docs/`. A redirect
 * cannot carry the Error body every non-2xx has, so that address serves the reference page itself
 * (built for a URL without a trailing slash, its asset links are absolute and work from there).
 * Call before registering the reference page.
 */
export function serveDocsIndexInPlaceOfRedirect(app: FastifyInstance, prefix = '/docs'): void {
  let indexHandler: RouteHandlerMethod | undefined;
  app.addHook('onRoute', (route) => {
    if (route.url === prefix && route.method === 'GET') indexHandler = route.handler;
    if (route.url === `${prefix}/static/index.html` && indexHandler !== undefined) route.handler = indexHandler;
  });
}
