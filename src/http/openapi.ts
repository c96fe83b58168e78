import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { HTTP_ERROR_CODES } from '../errors.ts';
import {
  HEADER_COMPONENTS,
  HEADER_COMPONENTS_PATH,
  PARAMETER_COMPONENTS,
  PARAMETER_COMPONENTS_PATH,
  REQUEST_BODY_EXAMPLES,
} from './openapi-responses.ts';
import { keptBody } from '../net/representation.ts';

const SCHEMA_COMPONENTS_PATH = '#/components/schemas/';

/** The version segment: the routes live under it, the document's server URL ends with it. */
export const VERSION_PREFIX = '/v1';

const CODE_LIST = HTTP_ERROR_CODES.map((code) => `\`${code}\``).join(', ');

const API_DESCRIPTION = `
The pet store API, version 1. Every operation needs \`Authorization: Bearer <API key>\`.

**Errors** have the body \`{code, message, status}\`. Codes: ${CODE_LIST}.

**Rate limits** are counted per account in a UTC-minute and a UTC-day window. Every response carries
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` for the most constraining window, and
\`RateLimit-Policy\` / \`RateLimit\` for both. Over a limit the answer is 429 with \`Retry-After\` in seconds.

**Usage:** \`GET /usage\` shows the account's windows, the key's state and the account's calls of deprecated
operations, and \`GET /usage/history\` the account's requests per hour or day; neither spends quota, they share a
small limit of their own and answer even while the key is banned.

**Request ids and caching:** every response carries \`X-Request-Id\` (the client's own when it is 1 to 128 visible
ASCII characters, otherwise a new one) and \`Cache-Control\` (\`no-store\`; the public documents
\`public, max-age=300\`).

**Conditional requests and compression:** a pet and a full page of the list never change and carry a strong
\`ETag\`; \`If-None-Match\` with it answers \`304\` without a body (still counted against the rate limits). Bodies of
1 KB or more are sent compressed (\`br\` or \`gzip\`) when \`Accept-Encoding\` allows it, with
\`Vary: Accept-Encoding\`.

**Deprecation:** \`GET /pets/{petId}\` is deprecated and is removed on 5 December 2030.
Migrate to \`GET /pets\` with the \`status\` filter.
`.trim();

/** The OpenAPI 3.1 document, generated from the schemas of the routes registered after it. */
export async function registerOpenApi(app: FastifyInstance, options: { publicBaseUrl: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pet store',
        version: '1.0.0',
        description: API_DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: `${options.publicBaseUrl}${VERSION_PREFIX}` }],
      tags: [
        { name: 'pets', description: 'The animals of the store.' },
        { name: 'usage', description: "The caller's account, limits, key and recorded requests." },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: pst_ followed by 36 letters and digits.',
          },
        },
        headers: HEADER_COMPONENTS,
        parameters: PARAMETER_COMPONENTS,
      },
      security: [{ bearerAuth: [] }],
    },
    // Paths are relative to the server URL, which already ends with the version segment.
    transform: ({ schema, url }) => ({ schema, url: withoutVersionPrefix(url) }),
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const document = documentObject.openapiObject;
      const schemas = isRecord(document.components?.schemas) ? document.components.schemas : {};
      for (const operation of operationsOf(document.paths)) {
        referenceSharedHeaders(operation);
        exemplifyRequestBody(operation);
        describeReferencingParameters(operation, schemas);
        acceptIfNoneMatch(operation);
      }
      return document;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
}

function withoutVersionPrefix(url: string): string {
  return url.startsWith(`${VERSION_PREFIX}/`) ? url.slice(VERSION_PREFIX.length) : url;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function operationsOf(paths: unknown): Record<string, unknown>[] {
  if (!isRecord(paths)) return [];
  return Object.values(paths)
    .filter(isRecord)
    .flatMap((pathItem) => Object.values(pathItem).filter(isRecord));
}

/**
 * @fastify/swagger renders each response header of a route as `{schema: <header>}`; a header that
 * names a shared component (src/http/openapi-responses.ts `headerRefs`) becomes the Reference
 * Object itself, keeping a description given for this response.
 */
function referenceSharedHeaders(operation: Record<string, unknown>): void {
  const responses = operation['responses'];
  if (!isRecord(responses)) return;
  for (const response of Object.values(responses)) {
    if (isRecord(response) && isRecord(response['headers'])) unwrapHeaderReferences(response['headers']);
  }
}

/**
 * @fastify/swagger drops the siblings of a request body's `$ref`, examples included, so a request
 * body gets the example of the component it refers to here.
 */
function exemplifyRequestBody(operation: Record<string, unknown>): void {
  const requestBody = operation['requestBody'];
  if (!isRecord(requestBody) || !isRecord(requestBody['content'])) return;
  for (const media of Object.values(requestBody['content'])) {
    if (!isRecord(media) || !isRecord(media['schema'])) continue;
    const ref = media['schema']['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith(SCHEMA_COMPONENTS_PATH)) continue;
    const example = REQUEST_BODY_EXAMPLES[ref.slice(SCHEMA_COMPONENTS_PATH.length)];
    if (example !== undefined) media['example'] = example;
  }
}

/**
 * @fastify/swagger drops the siblings of a parameter schema's `$ref`, so a parameter whose schema is
 * a shared component (the `status` filter) takes that component's description.
 */
function describeReferencingParameters(operation: Record<string, unknown>, schemas: Record<string, unknown>): void {
  const parameters = operation['parameters'];
  if (!Array.isArray(parameters)) return;
  for (const parameter of parameters) {
    if (!isRecord(parameter) || 'description' in parameter || !isRecord(parameter['schema'])) continue;
    const ref = parameter['schema']['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith(SCHEMA_COMPONENTS_PATH)) continue;
    const component = schemas[ref.slice(SCHEMA_COMPONENTS_PATH.length)];
    if (isRecord(component) && typeof component['description'] === 'string') {
      parameter['description'] = component['description'];
    }
  }
}

/**
 * An operation that documents a 304 takes If-None-Match. It is documented here rather than in the
 * route's `headers` schema, which would validate the headers of every request on the hottest paths
 * for a value that needs no validation: one that matches nothing is simply no match.
 */
function acceptIfNoneMatch(operation: Record<string, unknown>): void {
  const responses = operation['responses'];
  if (!isRecord(responses) || responses['304'] === undefined) return;
  const parameters = Array.isArray(operation['parameters']) ? operation['parameters'] : [];
  operation['parameters'] = [...parameters, { $ref: `${PARAMETER_COMPONENTS_PATH}IfNoneMatch` }];
}

function unwrapHeaderReferences(headers: Record<string, unknown>): void {
  for (const [name, header] of Object.entries(headers)) {
    if (!isRecord(header) || !isRecord(header['schema'])) continue;
    const ref = header['schema']['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith(HEADER_COMPONENTS_PATH)) continue;
    const description = header['description'];
    headers[name] = typeof description === 'string' ? { $ref: ref, description } : { $ref: ref };
  }
}

/** GET /v1/openapi.json: the document, public and cacheable. */
export function registerOpenApiDocumentRoute(app: FastifyInstance): void {
  app.get(
    '/v1/openapi.json',
    { config: { public: true, cacheable: true }, schema: { hide: true } },
    // The document is made once; its bytes, ETag and compressed forms are kept with it.
    async (_request, reply) => {
      const document = app.swagger();
      const body = keptBody(document, () => JSON.stringify(document));
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
