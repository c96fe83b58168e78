import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

const API_DESCRIPTION = `
The pet store API, version 1. Every operation needs \`Authorization: Bearer <API key>\`.

**Errors** have the body \`{code, message, status}\`. Codes: \`invalid_json\`, \`invalid_body\`, \`invalid_query\`,
\`invalid_path\`, \`unauthorized\`, \`not_found\`, \`gone\`, \`method_not_allowed\`, \`unsupported_media_type\`,
\`payload_too_large\`, \`idempotency_conflict\`, \`idempotency_in_flight\`, \`rate_limited\`, \`key_banned\`,
\`internal_error\`, \`service_unavailable\`.

**Rate limits** are counted per account in a UTC-minute and a UTC-day window. Every response carries
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` for the most constraining window, and
\`RateLimit-Policy\` / \`RateLimit\` for both. Over a limit the answer is 429 with \`Retry-After\` in seconds.

**Deprecation:** \`GET /v1/pets/{petId}\` is deprecated and is removed on 5 December 2030.
Migrate to \`GET /v1/pets\` with the \`status\` filter.
`.trim();

/** The OpenAPI 3.1 document, generated from the route schemas, and the reference page at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: { publicBaseUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet store', version: '1.0.0', description: API_DESCRIPTION },
      servers: [{ url: options.publicBaseUrl || '/' }],
      tags: [{ name: 'pets', description: 'The animals of the store.' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: pst_ followed by 36 letters and digits.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    uiHooks: {},
    staticCSP: true,
  });
}

export function registerOpenApiDocumentRoute(app: FastifyInstance): void {
  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.send(app.swagger()),
  );
}
