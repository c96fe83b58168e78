import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * The contract check behind `request()` of http-client.ts: an answer to a documented operation
 * must be what the OpenAPI document the app serves at /v1/openapi.json says (status documented for
 * the operation, body valid against the documented schema, documented headers well-typed).
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

/** Anything that answers HTTP at a base URL: a test app, a server process, another listener. */
export interface HttpTarget {
  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /**
   * The app itself when it runs in this process: its document is taken from it, the very object
   * /v1/openapi.json serializes, so that loading it adds no request to the app's logs or metrics.
   * Without it the document is fetched from `${url}/v1/openapi.json` once.
   */
  readonly app?: { swagger(): unknown };
  /** False for a listener that serves no part of the API (the operator listener): its answers are never checked. */
  readonly servesApi?: boolean;
}

const documentsByTarget = new WeakMap<object, Promise<ContractDocument>>();
/** Apps of one build serve the same document: they share its compiled schemas. */
const contractsByText = new Map<string, ContractDocument>();

/** The document `target` serves, loaded once per app (or per target object when it is not in this process). */
export function loadContract(target: HttpTarget): Promise<ContractDocument> {
  const owner = target.app ?? target;
  let loaded = documentsByTarget.get(owner);
  if (!loaded) {
    loaded = documentText(target).then(contractOf);
    documentsByTarget.set(owner, loaded);
  }
  return loaded;
}

async function documentText(target: HttpTarget): Promise<string> {
  if (target.app) return JSON.stringify(target.app.swagger());
  const response = await fetch(`${target.url}/v1/openapi.json`);
  assert.equal(response.status, 200, 'GET /v1/openapi.json must answer 200');
  return response.text();
}

function contractOf(text: string): ContractDocument {
  const known = contractsByText.get(text);
  if (known) return known;
  const document = JSON.parse(text) as OpenApiDocument;
  assert.match(document.openapi, /^3\.1\./, 'the document must be OpenAPI 3.1');
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addKeyword('x-expectation');
  addFormats(ajv);
  // The document refers to its shapes as `#/components/schemas/<Name>`: register each under exactly that id.
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    ajv.addSchema(schema, `#/components/schemas/${name}`);
  }
  const contract = { document, ajv, validators: new Map() };
  contractsByText.set(text, contract);
  return contract;
}

/**
 * Checks an answer of `target` with `assertMatchesDocument` when `method path` is an operation of
 * its document; any other answer (an undocumented path or method) passes unchecked.
 */
export async function assertDocumentedAnswer(
  target: HttpTarget,
  method: string,
  path: string,
  response: ObservedResponse,
): Promise<void> {
  if (target.servesApi === false) return;
  const doc = await loadContract(target);
  const pathTemplate = pathTemplateOf(doc, path);
  if (pathTemplate === undefined || !doc.document.paths[pathTemplate]?.[method.toLowerCase()]) return;
  assertMatchesDocument(doc, method, pathTemplate, response);
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
