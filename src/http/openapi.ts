import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { keptBody } from '../net/representation.ts';
import { sendKept } from './kept-reply.ts';

const SCHEMA_COMPONENTS_PATH = '#/components/schemas/';
/** Where a document keeps its shared response headers and parameters. */
export const HEADER_COMPONENTS_PATH = '#/components/headers/';
export const PARAMETER_COMPONENTS_PATH = '#/components/parameters/';

type DocumentFields = NonNullable<FastifyDynamicSwaggerOptions['openapi']>;

/** What one app's OpenAPI document says of itself; its paths come from the routes' schemas. */
export interface ApiDocument {
  /** Where the documented routes live (`/v1`, `/admin/v1`): paths are written relative to it. */
  readonly prefix: string;
  /** What the document says of itself: info, servers, tags, components, security; its paths come from the routes. */
  readonly fields: DocumentFields;
  /**
   * Served without credentials and cacheable briefly (the public API's); otherwise behind the app's
   * own authentication and never cached.
   */
  readonly open: boolean;
  /** Examples of request bodies by schema name: @fastify/swagger drops those beside a `$ref`. */
  readonly requestBodyExamples?: Readonly<Record<string, unknown>>;
}

/**
 * The OpenAPI 3.1 document of an app, made from the schemas of the routes registered after it:
 * those under the document's prefix, with paths relative to it; routes elsewhere are left out. It
 * is served at `<prefix>/openapi.json`.
 */
export async function registerOpenApi(app: FastifyInstance, document: ApiDocument): Promise<void> {
  const { prefix } = document;
  await app.register(swagger, {
    openapi: { ...document.fields, openapi: '3.1.0' },
    transform: ({ schema, url }) =>
      url.startsWith(`${prefix}/`)
        ? { schema, url: url.slice(prefix.length) }
        : { schema: { ...schema, hide: true }, url },
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const made = documentObject.openapiObject;
      const schemas = isRecord(made.components?.schemas) ? made.components.schemas : {};
      for (const operation of operationsOf(made.paths)) {
        referenceSharedHeaders(operation);
        exemplifyRequestBody(operation, document.requestBodyExamples ?? {});
        describeReferencingParameters(operation, schemas);
        acceptIfNoneMatch(operation);
      }
      return made;
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  serveDocument(app, document);
}

/** GET <prefix>/openapi.json: the document, made once; its bytes, ETag and compressed forms are kept with it. */
function serveDocument(app: FastifyInstance, { prefix, open }: ApiDocument): void {
  app.get(
    `${prefix}/openapi.json`,
    { config: { public: open, cacheable: open }, schema: { hide: true } },
    async (_request, reply) => {
      const made = app.swagger();
      return sendKept(
        reply.type('application/json; charset=utf-8'),
        keptBody(made, () => JSON.stringify(made)),
      );
    },
  );
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
function exemplifyRequestBody(operation: Record<string, unknown>, examples: Readonly<Record<string, unknown>>): void {
  const requestBody = operation['requestBody'];
  if (!isRecord(requestBody) || !isRecord(requestBody['content'])) return;
  for (const media of Object.values(requestBody['content'])) {
    if (!isRecord(media) || !isRecord(media['schema'])) continue;
    const ref = media['schema']['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith(SCHEMA_COMPONENTS_PATH)) continue;
    const example = examples[ref.slice(SCHEMA_COMPONENTS_PATH.length)];
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
