import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { serveDocsIndexInPlaceOfRedirect } from '../docs-index.ts';
import { registerDocsPage } from '../docs-page.ts';
import { registerOpenApi, registerOpenApiDocumentRoute } from '../openapi.ts';

/**
 * The public documents: the OpenAPI document at /v1/openapi.json and the reference page at /docs.
 * On the root instance and before the routes: the document is made from the routes registered
 * after it, wherever they are registered.
 */
export const documents = fastifyPlugin<{ publicBaseUrl: string }>(
  async (app: FastifyInstance, options: { publicBaseUrl: string }) => {
    serveDocsIndexInPlaceOfRedirect(app);
    await registerOpenApi(app, options);
    await registerDocsPage(app, options);
    registerOpenApiDocumentRoute(app);
  },
  { name: 'documents' },
);
