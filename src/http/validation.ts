import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { ValidationError } from '../errors.ts';
import { INT64_MAX, INT64_MIN, rememberExactDigits } from './json-body.ts';
import { excerpt } from './quote.ts';

/**
 * Request validation with the route schemas (src/pets/pet-schemas.ts), stricter than Fastify's
 * defaults: no type coercion of bodies, no silent removal of unknown fields, query or path integers
 * only in plain decimal (no `0x10`, `1e1` or ` 5`), no control characters in query or path values
 * (PostgreSQL refuses text holding NUL, and no parameter here means one), and no query parameter
 * an operation does not take (takeOnlyDocumentedQueries). Messages name the field and say what a
 * valid value looks like.
 */
type SchemaNode = {
  $id?: string;
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: readonly string[];
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  'x-expectation'?: string;
};

type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** How an app's requests are held to their schemas, where the public API and the admin API differ. */
export interface ValidationRules {
  /**
   * A request without a body is one with `{}` when its body schema requires no field (the admin
   * API's `POST …/keys` with no expiry), and is refused in words that name no shape otherwise. By
   * default a missing body is refused naming the shape to send (`send a NewPet JSON object`).
   */
  readonly absentBodyIsEmpty?: boolean;
}

export function createValidatorCompiler(
  sharedSchemas: readonly object[],
  rules: ValidationRules = {},
): FastifySchemaCompiler<FastifySchema> {
  const ajv = new Ajv({
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  for (const schema of sharedSchemas) ajv.addSchema(schema);
  const byId = new Map((sharedSchemas as SchemaNode[]).map((schema) => [schema.$id, schema]));
  return ({ schema, httpPart }) => {
    const validate = ajv.compile(schema);
    const part = (httpPart ?? 'body') as HttpPart;
    const named = schema as SchemaNode;
    const root = (named.$ref === undefined ? named : byId.get(named.$ref.replace(/#$/, ''))) ?? named;
    const required = (root.required ?? []).length > 0;
    const textParameters = Object.entries(root.properties ?? {});
    return (data: unknown) => {
      if (rules.absentBodyIsEmpty === true && part === 'body' && (data === undefined || data === null)) {
        if (!required) return { value: {} };
        return { error: new ValidationError('invalid_body', 'the request body is required: send a JSON object') };
      }
      if (part === 'querystring') {
        const unknown = unknownParameters(root, data as Record<string, unknown>);
        if (unknown) return { error: unknown };
      }
      if (part === 'querystring' || part === 'params') {
        const problem = normaliseTextParameters(textParameters, data as Record<string, unknown>, part);
        if (problem) return { error: problem };
      }
      if (validate(data)) return { value: data };
      return { error: describe(validate, root, part, data) };
    };
  };
}

/**
 * The query of an operation (a route its app's document describes, under `prefix`) is held to its
 * schema like its body: a route without a querystring schema takes no query parameter, so that a
 * mistyped or unsupported one (`?limt=5`, `?q=` where there is no search) is refused instead of
 * silently ignored. Documents, pages and probes outside the document (the reference page, the
 * console, /healthz, /metrics) take any: browsers and caches add parameters of their own.
 * For an onRoute hook, registered before the routes.
 */
export function takeOnlyDocumentedQueries(route: RouteOptions, prefix: string): void {
  const schema = route.schema;
  if (schema === undefined || schema.hide === true || !route.url.startsWith(`${prefix}/`)) return;
  if (schema.querystring === undefined) route.schema = { ...schema, querystring: NO_QUERY_PARAMETERS };
}

const NO_QUERY_PARAMETERS = { type: 'object', properties: {} };

/** Every query parameter the schema does not name, refused in one message that names them. */
function unknownParameters(root: SchemaNode, values: Record<string, unknown>): ValidationError | undefined {
  const known = root.properties ?? {};
  const unknown: string[] = [];
  for (const name in values) if (!Object.hasOwn(known, name)) unknown.push(`'${excerpt(name)}'`);
  if (unknown.length === 0) return undefined;
  const names = Object.keys(known);
  const taken = names.length === 0 ? 'this operation takes none' : `this operation takes ${names.join(', ')}`;
  const noun = unknown.length > 1 ? 'parameters' : 'parameter';
  return new ValidationError('invalid_query', `unknown query ${noun} ${unknown.join(', ')}; ${taken}`);
}

const DECIMAL = /^-?(0|[1-9][0-9]*)$/;
// eslint-disable-next-line no-control-regex -- finding control characters is its purpose
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F-\u009F]/;

/** Up to this many characters, a plain decimal lies inside int64 and is exact as a JavaScript number. */
const EXACT_DECIMAL_LENGTH = 15;

/**
 * Turns plain-decimal strings into numbers where the schema wants integers; refuses repeats and
 * control characters. `parameters` are the schema's properties, listed once when it is compiled.
 */
function normaliseTextParameters(
  parameters: readonly (readonly [string, SchemaNode])[],
  values: Record<string, unknown>,
  part: 'querystring' | 'params',
): ValidationError | undefined {
  for (const [name, schema] of parameters) {
    const value = values[name];
    if (value === undefined) continue;
    if (Array.isArray(value))
      return new ValidationError('invalid_query', `query parameter '${name}' is repeated; send it once`);
    if (typeof value === 'string' && CONTROL_CHARACTER.test(value)) {
      const label = part === 'params' ? 'path parameter' : 'query parameter';
      return new ValidationError(codeOf(part), `${label} '${name}' must not contain control characters`);
    }
    if (schema.type === 'integer' && typeof value === 'string' && DECIMAL.test(value)) {
      if (value.length <= EXACT_DECIMAL_LENGTH) {
        values[name] = Number(value);
        continue;
      }
      const exact = BigInt(value);
      if (exact >= INT64_MIN && exact <= INT64_MAX) {
        values[name] = Number(value);
        if (!Number.isSafeInteger(values[name])) rememberExactDigits(values, name, value);
      }
    }
  }
  return undefined;
}

function describe(validate: ValidateFunction, root: SchemaNode, part: HttpPart, data: unknown): ValidationError {
  const error = (validate.errors ?? [])[0];
  if (!error) return new ValidationError(codeOf(part), 'the request is invalid');
  if (part === 'body') return new ValidationError('invalid_body', bodyMessage(error, root, data));
  const name = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  const schema = root.properties?.[name];
  const label = { params: 'path parameter', querystring: 'query parameter', headers: 'header' }[part] + ` '${name}'`;
  const got = (data as Record<string, unknown>)[name];
  return new ValidationError(codeOf(part), `${label} ${expectationOf(schema, error)} (got '${excerpt(String(got))}')`);
}

function codeOf(part: HttpPart): 'invalid_body' | 'invalid_query' | 'invalid_path' {
  // A bad request header (Idempotency-Key) concerns the body's handling, so it is reported as invalid_body.
  if (part === 'querystring') return 'invalid_query';
  if (part === 'params') return 'invalid_path';
  return 'invalid_body';
}

function bodyMessage(error: ErrorObject, root: SchemaNode, data: unknown): string {
  if (error.instancePath === '') {
    if (error.keyword === 'required')
      return `the body is missing the required field '${String(error.params.missingProperty)}'`;
    if (error.keyword === 'additionalProperties') {
      const field = String(error.params.additionalProperty);
      if (field === 'id') return "the body must not contain 'id': the service assigns it";
      const allowed = Object.keys(root.properties ?? {}).join(', ');
      return `the body contains the unknown field '${excerpt(field)}'; allowed fields are ${allowed}`;
    }
    if (error.keyword === 'type')
      return data === undefined || data === null
        ? 'the request body is required: send a NewPet JSON object'
        : 'the body must be a JSON object';
    return `the body ${error.message ?? 'is invalid'}`;
  }
  const field = error.instancePath.replace(/^\//, '').split('/')[0] ?? '';
  const got = JSON.stringify((data as Record<string, unknown>)[field]) ?? 'undefined';
  return `field '${field}' ${expectationOf(root.properties?.[field], error)} (got ${excerpt(got)})`;
}

/** "must be <what a valid value looks like>", from the schema's annotation or its enumeration. */
function expectationOf(schema: SchemaNode | undefined, error: ErrorObject): string {
  if (schema?.['x-expectation']) return `must be ${schema['x-expectation']}`;
  if (schema?.enum) return `must be one of ${schema.enum.map(String).join(', ')}`;
  return error.message ?? 'is invalid';
}
