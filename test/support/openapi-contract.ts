import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * Contract check: every response a test sees through `api()` is checked against the OpenAPI
 * document the app itself serves at /v1/openapi.json (status documented for the operation, body
 * valid against the documented schema, documented headers well-typed).
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type JsonSchema = Record<string, unknown>;

interface HeaderObject {
  readonly schema?: JsonSchema;
  readonly required?: boolean;
}

/** A Reference Object: `#/components/headers/<Name>`, optionally with a description for this use. */
interface HeaderReference {
  readonly $ref: string;
  readonly description?: string;
}

interface ResponseObject {
  readonly description?: string;
  readonly headers?: Record<string, HeaderObject | HeaderReference>;
  readonly content?: Record<string, { readonly schema?: JsonSchema }>;
}

interface OperationObject {
  readonly operationId?: string;
  readonly responses: Record<string, ResponseObject>;
}

export interface OpenApiDocument {
  readonly openapi: string;
  readonly servers?: ReadonlyArray<{ readonly url: string }>;
  readonly paths: Record<string, Record<string, OperationObject>>;
  readonly components: {
    readonly schemas: Record<string, JsonSchema>;
    readonly headers?: Record<string, HeaderObject>;
  };
}

const HEADER_COMPONENTS_PATH = '#/components/headers/';

/** The served document with an Ajv instance that knows its component schemas. */
export interface ContractDocument {
  readonly document: OpenApiDocument;
  readonly ajv: Ajv2020;
  readonly validators: Map<string, ValidateFunction>;
}

export interface ObservedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly bodyText: string;
}

const documents = new Map<string, Promise<ContractDocument>>();

/** Fetches `${url}/v1/openapi.json` once per app (keyed by its base URL). */
export function loadContract(url: string): Promise<ContractDocument> {
  let loaded = documents.get(url);
  if (!loaded) {
    loaded = fetchContract(url);
    documents.set(url, loaded);
  }
  return loaded;
}

async function fetchContract(url: string): Promise<ContractDocument> {
  const response = await fetch(`${url}/v1/openapi.json`);
  assert.equal(response.status, 200, 'GET /v1/openapi.json must answer 200');
  const document = (await response.json()) as OpenApiDocument;
  assert.match(document.openapi, /^3\.1\./, 'the document must be OpenAPI 3.1');
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addKeyword('x-expectation');
  addFormats(ajv);
  // The document refers to its shapes as `#/components/schemas/<Name>`: register each under exactly that id.
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    ajv.addSchema(schema, `#/components/schemas/${name}`);
  }
  return { document, ajv, validators: new Map() };
}

function validatorFor(doc: ContractDocument, cacheKey: string, schema: JsonSchema): ValidateFunction {
  let validate = doc.validators.get(cacheKey);
  if (!validate) {
    validate = doc.ajv.compile(schema);
    doc.validators.set(cacheKey, validate);
  }
  return validate;
}

/** Validates a value against a named component schema (e.g. 'Error'); returns Ajv's error text or undefined. */
export function schemaErrors(doc: ContractDocument, componentName: string, value: unknown): string | undefined {
  assert.ok(doc.document.components.schemas[componentName], `the document has no component schema ${componentName}`);
  const validate = validatorFor(doc, `component:${componentName}`, { $ref: `#/components/schemas/${componentName}` });
  return validate(value) ? undefined : doc.ajv.errorsText(validate.errors);
}

/** The path part of `servers[0].url` (relative or absolute), without a trailing slash: e.g. `/v1`. */
function serverBasePath(doc: ContractDocument): string {
  const url = doc.document.servers?.[0]?.url ?? '/';
  const pathname = new URL(url, 'http://base.invalid').pathname;
  return pathname.replace(/\/+$/, '');
}

/** A request path relative to the server URL, or undefined when it lies outside the server's base path. */
function relativeToServer(doc: ContractDocument, pathname: string): string | undefined {
  const base = serverBasePath(doc);
  if (base === '') return pathname;
  if (pathname === base) return '/';
  return pathname.startsWith(`${base}/`) ? pathname.slice(base.length) : undefined;
}

/**
 * The document's path template matching a concrete request path (query ignored), through the
 * server URL: with the server `/v1`, /v1/pets/7 → /pets/{petId}.
 */
export function pathTemplateOf(doc: ContractDocument, path: string): string | undefined {
  const pathname = relativeToServer(doc, path.split('?')[0] ?? path);
  if (pathname === undefined) return undefined;
  const templates = Object.keys(doc.document.paths);
  if (templates.includes(pathname)) return pathname;
  return templates.find((template) => {
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    return new RegExp(`^${pattern}$`).test(pathname);
  });
}

/**
 * Fails unless the response is what the document says `method pathTemplate` may answer: the status
 * (or `default`) is documented, documented headers that are present have the documented type,
 * and the body parses as JSON valid against the documented schema.
 */
export function assertMatchesDocument(
  doc: ContractDocument,
  method: string,
  pathTemplate: string,
  response: ObservedResponse,
): void {
  const where = `${method.toUpperCase()} ${pathTemplate} → ${response.status}`;
  // A template written as the request path (/v1/pets) is read through the server URL (/pets).
  const pathItem = doc.document.paths[pathTemplate] ?? doc.document.paths[relativeToServer(doc, pathTemplate) ?? ''];
  assert.ok(pathItem, `${where}: path not in the OpenAPI document`);
  const operation = pathItem[method.toLowerCase()];
  assert.ok(operation, `${where}: operation not in the OpenAPI document`);
  const statusKey = String(response.status);
  const documented = operation.responses[statusKey] ?? operation.responses['default'];
  assert.ok(
    documented,
    `${where}: status not documented for ${operation.operationId ?? 'the operation'} ` +
      `(documented: ${Object.keys(operation.responses).join(', ')}); body ${response.bodyText.slice(0, 300)}`,
  );
  const responseKey = operation.responses[statusKey] ? statusKey : 'default';

  for (const [name, use] of Object.entries(documented.headers ?? {})) {
    const header = resolveHeader(doc, use, where);
    const value = response.headers.get(name);
    if (value === null) {
      assert.ok(header.required !== true, `${where}: required header ${name} is missing`);
      continue;
    }
    if (!header.schema) continue;
    const wantsNumber = header.schema['type'] === 'integer' || header.schema['type'] === 'number';
    const typed: unknown = wantsNumber && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : value;
    const validate = validatorFor(doc, `header:${pathTemplate}:${method}:${responseKey}:${name}`, header.schema);
    assert.ok(
      validate(typed),
      `${where}: header ${name}: ${JSON.stringify(value)} ${doc.ajv.errorsText(validate.errors)}`,
    );
  }

  const content = documented.content;
  if (!content || Object.keys(content).length === 0) {
    assert.equal(response.bodyText, '', `${where}: the document declares no body`);
    return;
  }
  const media = content['application/json'];
  assert.ok(media, `${where}: the document declares no application/json body (has ${Object.keys(content).join(', ')})`);
  if (method.toUpperCase() === 'HEAD') return;
  const contentType = response.headers.get('content-type') ?? '';
  assert.match(
    contentType,
    /^application\/json\b/i,
    `${where}: Content-Type must be application/json, got ${JSON.stringify(contentType)}`,
  );
  let body: unknown;
  try {
    body = JSON.parse(response.bodyText);
  } catch (error) {
    assert.fail(`${where}: body is not JSON (${String(error)}): ${response.bodyText.slice(0, 300)}`);
  }
  if (!media.schema) return;
  const validate = validatorFor(doc, `body:${pathTemplate}:${method}:${responseKey}`, media.schema);
  assert.ok(
    validate(body),
    `${where}: body does not match the documented schema: ${doc.ajv.errorsText(validate.errors)}; ` +
      `body ${response.bodyText.slice(0, 300)}`,
  );
}

function resolveHeader(doc: ContractDocument, use: HeaderObject | HeaderReference, where: string): HeaderObject {
  if (!('$ref' in use)) return use;
  assert.ok(use.$ref.startsWith(HEADER_COMPONENTS_PATH), `${where}: header $ref ${use.$ref} is not a header component`);
  const header = doc.document.components.headers?.[use.$ref.slice(HEADER_COMPONENTS_PATH.length)];
  assert.ok(header, `${where}: header $ref ${use.$ref} resolves to nothing`);
  return header;
}

/** One response seen by an `api()` client, already checked against the document. */
export interface ApiResponse {
  readonly method: string;
  readonly path: string;
  readonly pathTemplate: string;
  readonly status: number;
  readonly headers: Headers;
  /** The raw body, for checks the JSON parse would spoil (int64 digits). */
  readonly text: string;
  /** The body parsed as JSON. */
  json<T>(): T;
}

export interface RequestOptions {
  /** Overrides the client's key for this request; null sends no Authorization header. */
  readonly key?: string | null;
  /** Extra or overriding headers (e.g. content-type, idempotency-key, a custom authorization). */
  readonly headers?: Record<string, string>;
}

export interface ApiClient {
  readonly url: string;
  /** Every response this client has seen, in order. */
  readonly responses: readonly ApiResponse[];
  /** The same client with another default key (null: none); responses are recorded in the same log. */
  withKey(key: string | null): ApiClient;
  get(path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** A string body is sent as is; anything else is JSON.stringify-ed. Content-Type defaults to application/json. */
  post(path: string, body: unknown, options?: RequestOptions): Promise<ApiResponse>;
  contract(): Promise<ContractDocument>;
}

/** Every response seen by every `api()` client of this test file. */
export const contractLog: ApiResponse[] = [];

/**
 * A small client for the app's documented operations. Each response is recorded and checked with
 * `assertMatchesDocument`, so any test using it is also a contract test. Paths outside the
 * document fail: use plain fetch for undocumented paths (404, 405, operator endpoints).
 */
export function api(testApp: { readonly url: string }, key: string | null = null): ApiClient {
  return makeClient(testApp.url, key, []);
}

function makeClient(url: string, key: string | null, log: ApiResponse[]): ApiClient {
  async function send(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    options: RequestOptions,
  ): Promise<ApiResponse> {
    const doc = await loadContract(url);
    const pathTemplate = pathTemplateOf(doc, path);
    assert.ok(
      pathTemplate,
      `${method} ${path}: no matching path in the OpenAPI document; use fetch for undocumented paths`,
    );
    const headers: Record<string, string> = {};
    const effectiveKey = options.key === undefined ? key : options.key;
    if (effectiveKey !== null) headers['authorization'] = `Bearer ${effectiveKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, options.headers ?? {});
    const response = await fetch(`${url}${path}`, { method, headers, body });
    const text = await response.text();
    assertMatchesDocument(doc, method, pathTemplate, {
      status: response.status,
      headers: response.headers,
      bodyText: text,
    });
    const recorded: ApiResponse = {
      method,
      path,
      pathTemplate,
      status: response.status,
      headers: response.headers,
      text,
      json<T>(): T {
        return JSON.parse(text) as T;
      },
    };
    log.push(recorded);
    contractLog.push(recorded);
    return recorded;
  }
  return {
    url,
    responses: log,
    withKey: (other) => makeClient(url, other, log),
    get: (path, options = {}) => send('GET', path, undefined, options),
    post: (path, body, options = {}) =>
      send('POST', path, typeof body === 'string' ? body : JSON.stringify(body), options),
    contract: () => loadContract(url),
  };
}

/** A Pet as the API returns it (categoryId as parsed by JSON.parse: compare raw text for exact digits). */
export interface Pet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status?: 'available' | 'pending' | 'sold';
}

export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly status: number;
}

/**
 * Asserts an Error response: the given status and code, a body of exactly {code, message, status}
 * with status equal to the HTTP status, no stack trace, and a message mentioning each of `mentions`.
 */
export function assertError(
  response: { readonly status: number; readonly text: string },
  status: number,
  code: string,
  ...mentions: string[]
): ErrorBody {
  assert.equal(
    response.status,
    status,
    `expected ${status} ${code}, got ${response.status}: ${response.text.slice(0, 300)}`,
  );
  const body = JSON.parse(response.text) as ErrorBody;
  assert.deepEqual(
    Object.keys(body).sort(),
    ['code', 'message', 'status'],
    `error body must be exactly {code, message, status}: ${response.text}`,
  );
  assert.equal(body.code, code, `error code: ${response.text}`);
  assert.equal(body.status, status, 'error body status equals the HTTP status');
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0, 'error message is not empty');
  assertNoStackTrace(response.text);
  for (const mention of mentions)
    assert.ok(
      body.message.includes(mention),
      `message ${JSON.stringify(body.message)} should mention ${JSON.stringify(mention)}`,
    );
  return body;
}

export function assertNoStackTrace(text: string): void {
  assert.doesNotMatch(
    text,
    /\bat .+\(.*:\d+:\d+\)|\bat (file|node):|\.ts:\d+|node_modules|Error: .*\n\s+at /,
    `response leaks a stack trace: ${text.slice(0, 300)}`,
  );
}
