import type { HttpErrorCode } from '../errors.ts';
import { type NewPetBody, type Pet } from '../pets/pet-schemas.ts';
import { ErrorRef, type ErrorBody } from './error-schema.ts';
import { STATUS_OF } from './error-body.ts';
import { HEADER_COMPONENTS_PATH } from './openapi.ts';

interface HeaderComponent {
  readonly description: string;
  readonly schema: {
    type: 'integer' | 'string';
    minimum?: number;
    format?: string;
    enum?: string[];
    pattern?: string;
  };
}

/** The response headers of the interface, written once as `components.headers`. */
export const HEADER_COMPONENTS = {
  'X-RateLimit-Limit': {
    description: 'Limit of the most constraining window.',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in that window (never below 0).',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time, in seconds, when that window resets.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Policy': {
    description: 'IETF draft: both windows, e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF draft: both windows, e.g. `"minute";r=59;t=42, "day";r=998;t=51000`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying (at least 1).',
    schema: { type: 'integer', minimum: 1 },
  },
  'WWW-Authenticate': { description: 'RFC 6750 Bearer challenge.', schema: { type: 'string' } },
  Location: { description: 'URL of the new pet.', schema: { type: 'string', format: 'uri-reference' } },
  Link: {
    description: 'RFC 8288 links: `rel="next"` on a page that may be followed, `rel="deprecation"` on getPet.',
    schema: { type: 'string' },
  },
  Deprecation: { description: 'RFC 9745 date of deprecation, `@<unix seconds>`.', schema: { type: 'string' } },
  Sunset: { description: 'RFC 8594 removal date, an HTTP date.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: 'Present, with `true`, when the response replays the first one for this Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  Allow: { description: 'The methods the path accepts.', schema: { type: 'string' } },
  'X-Request-Id': {
    description:
      "The request's id: the client's own `X-Request-Id` when it is 1 to 128 visible ASCII characters " +
      '(sent once), otherwise a new one. The service logs it with the request; quote it when reporting a problem.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
  },
  'Cache-Control': {
    description:
      '`no-store` on every response of the API (errors included): answers to a key are never stored by any ' +
      'cache. The public documents (`/openapi.json`, `/docs`) are `public, max-age=300`.',
    schema: { type: 'string' },
  },
  ETag: {
    description:
      'Strong validator of the body: the same for the same content on every instance. Each content coding ' +
      'has its own (`"…-br"`, `"…-gzip"`). Send it back in `If-None-Match` to get `304` while it is current.',
    schema: { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' },
  },
  Vary: {
    description:
      'Lists `Accept-Encoding` when the body, of 1 KB or more, may be sent compressed (and `Origin` when ' +
      'cross-origin requests are allowed).',
    schema: { type: 'string' },
  },
  'Content-Encoding': {
    description:
      'How the body is compressed, as the `Accept-Encoding` of the request allows: `br` or `gzip`. Only ' +
      'bodies of 1 KB or more are compressed; without it, the body is not.',
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
} satisfies Record<string, HeaderComponent>;

export type SharedHeader = keyof typeof HEADER_COMPONENTS;

/** Sent on every response to an authenticated request. */
export const RATE_LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
] as const satisfies readonly SharedHeader[];

/** Sent on every response, whoever asks. */
export const RESPONSE_HEADERS = ['X-Request-Id', 'Cache-Control'] as const satisfies readonly SharedHeader[];

/** On a body that never changes (a pet, a full page): its validator, and how it may be compressed. */
export const REPRESENTATION_HEADERS = ['ETag', 'Vary', 'Content-Encoding'] as const satisfies readonly SharedHeader[];

/** Request parameters shared by operations, written once as `components.parameters`. */
export const PARAMETER_COMPONENTS = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'ETags of copies the client holds (`"…", W/"…"`, or `*`). When one matches the current content, in any ' +
      'content coding, the answer is `304` without a body. The request counts against the rate limits like any other.',
    schema: { type: 'string' },
  },
} as const;

/**
 * The 304 of a conditional GET: no body (`type: 'null'` tells @fastify/swagger so), and the headers
 * the 200 would have carried, given here in the order of the 200's.
 */
export function notModifiedResponse(...uses: readonly HeaderUse[]): {
  type: 'null';
  description: string;
  headers: ReturnType<typeof headerRefs>;
} {
  return {
    type: 'null',
    description:
      'Not modified: `If-None-Match` matched the current ETag. No body; the headers are those of the 200, ' +
      'with the ETag of the coding the 200 would have used.',
    headers: headerRefs(...uses.filter((use) => (typeof use === 'string' ? use : use[0]) !== 'Content-Encoding')),
  };
}

/** A header of one response: the shared component, with a description for this response if given. */
export type HeaderUse = SharedHeader | readonly [SharedHeader, string];

/**
 * Response headers for a route schema, each a `$ref` to its component. @fastify/swagger wraps a
 * route's header in `{schema}`; `referenceSharedHeaders` (src/http/openapi.ts) unwraps the `$ref`.
 */
export function headerRefs(...uses: readonly HeaderUse[]): Record<string, { $ref: string; description?: string }> {
  const headers: Record<string, { $ref: string; description?: string }> = {};
  for (const use of uses) {
    const [name, description] = typeof use === 'string' ? [use, undefined] : use;
    headers[name] = { $ref: `${HEADER_COMPONENTS_PATH}${name}`, ...(description === undefined ? {} : { description }) };
  }
  return headers;
}

export const NEW_PET_EXAMPLE: NewPetBody = { name: 'Rex', categoryId: 3, status: 'available' };
export const PET_EXAMPLE: Pet = { id: 42, name: 'Rex', categoryId: 3, status: 'available' };
/** The example of each request body, by the name of its component schema. */
export const REQUEST_BODY_EXAMPLES: Readonly<Record<string, unknown>> = {
  NewPet: NEW_PET_EXAMPLE,
  NewKey: { name: 'dashboard', scopes: ['pets:read', 'usage:read'], expiresInSeconds: 7_776_000 },
  RollKey: { gracePeriodSeconds: 3600 },
};

export const PETS_EXAMPLE: Pet[] = [
  PET_EXAMPLE,
  { id: 43, name: 'Tom', categoryId: 7, status: 'pending' },
  { id: 44, name: 'Luna', categoryId: 3 },
];

/** A message the service really sends for each code, for the document's examples. */
const EXAMPLE_MESSAGES: Readonly<Record<HttpErrorCode, string>> = {
  invalid_json:
    "the request body is not valid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
  invalid_body: "the body is missing the required field 'categoryId'",
  invalid_query: "query parameter 'limit' must be an integer from 1 to 100 (got '0')",
  invalid_path: "path parameter 'petId' must be an int64 integer (got 'abc')",
  invalid_host:
    'the Host header "api.example.com:99999" is not a host name or IP address with an optional port from 0 to 65535',
  unauthorized: 'the Authorization header is missing; send Authorization: Bearer <API key>',
  not_found: 'no pet with id 999',
  gone: 'GET /v1/pets/{petId} was removed on Thu, 05 Dec 2030 00:00:00 GMT; use GET /v1/pets with the status filter',
  method_not_allowed: 'DELETE is not allowed on /v1/pets/{petId}; allowed: GET, HEAD',
  unsupported_media_type: 'the request body must be application/json (got "text/plain")',
  payload_too_large: 'the request body exceeds 16384 bytes',
  idempotency_conflict: 'this Idempotency-Key was already used with a different request body',
  idempotency_in_flight: 'a request with this Idempotency-Key is still being processed; retry shortly',
  key_limit:
    "the account 'acme' holds 20 active keys and may hold 20: revoke one, or let one expire, before creating another",
  key_inactive: "the key 'key_8fz2p5c0qaLm4RtY' is revoked: only an active key can be rolled; create a new one",
  request_timeout: 'the request did not arrive in time',
  expectation_failed: 'the expectation "something" is not supported; send no Expect header, or Expect: 100-continue',
  headers_too_large: 'the request headers are too large',
  insufficient_scope:
    "this API key may not call POST /v1/pets: that needs the scope 'pets:write', and the key has pets:read, usage:read",
  rate_limited: 'rate limit exceeded (60 per minute, per account); retry after 42 s',
  key_banned:
    'this API key is banned until 2030-01-01T12:10:00.000Z for repeated requests after a 429; retry after 600 s',
  internal_error: 'the service failed to handle this request; it has been logged',
  method_not_implemented: 'the method "FOO" is not implemented (methods are case-sensitive); use GET, HEAD or POST',
  service_unavailable: 'storage is unavailable: connection refused; retry later',
};

export function errorExample(code: HttpErrorCode): ErrorBody {
  return { code, message: EXAMPLE_MESSAGES[code], status: STATUS_OF[code] };
}

interface ErrorResponseSpec {
  readonly description: string;
  readonly codes: readonly HttpErrorCode[];
  readonly headers?: readonly HeaderUse[];
}

/** Error statuses an operation may list; 405, 417, 500 and 503 apply to every operation, and a 400. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429;

const ERROR_RESPONSES: Readonly<Record<ErrorStatus | 405 | 417 | 500 | 503, ErrorResponseSpec>> = {
  400: {
    description:
      'The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message ' +
      'naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed.',
    codes: ['invalid_json', 'invalid_body', 'invalid_query', 'invalid_path', 'invalid_host'],
  },
  401: {
    description: 'The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`.',
    codes: ['unauthorized'],
    headers: ['WWW-Authenticate'],
  },
  403: {
    description:
      'The API key is valid but lacks the scope this operation needs (`insufficient_scope`); ' +
      '`WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope.',
    codes: ['insufficient_scope'],
    headers: [['WWW-Authenticate', 'RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`.']],
  },
  404: { description: 'No such resource (`not_found`).', codes: ['not_found'] },
  405: {
    description: 'The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods.',
    codes: ['method_not_allowed'],
    headers: ['Allow'],
  },
  409: {
    description: 'A request with the same Idempotency-Key is still in flight (`idempotency_in_flight`).',
    codes: ['idempotency_in_flight'],
  },
  410: { description: 'The operation has been removed (`gone`).', codes: ['gone'] },
  417: {
    description: 'An `Expect` header other than `100-continue` (`expectation_failed`).',
    codes: ['expectation_failed'],
  },
  413: { description: 'The body exceeds 16 KiB (`payload_too_large`).', codes: ['payload_too_large'] },
  415: {
    description: 'The body is not `application/json` (`unsupported_media_type`).',
    codes: ['unsupported_media_type'],
  },
  422: {
    description: 'The Idempotency-Key was used with a different body (`idempotency_conflict`).',
    codes: ['idempotency_conflict'],
  },
  429: {
    description:
      'Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds.',
    codes: ['rate_limited', 'key_banned'],
    headers: ['Retry-After'],
  },
  500: { description: 'Unexpected failure (`internal_error`); no internals are shown.', codes: ['internal_error'] },
  503: {
    description:
      'Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been ' +
      'committed: retry it with the same `Idempotency-Key`.',
    codes: ['service_unavailable'],
  },
};

/** The 400 of an operation that takes neither a body nor query parameters: what every request may get wrong. */
const INPUT_REFUSED: ErrorResponseSpec = {
  description:
    'The request is invalid: `invalid_host`, a Host header missing, repeated or malformed; `invalid_query`, a ' +
    'query parameter, which this operation does not take; `invalid_body`, a body, which it does not take either.',
  codes: ['invalid_host', 'invalid_query', 'invalid_body'],
};

export interface ErrorResponse {
  readonly description: string;
  readonly headers: ReturnType<typeof headerRefs>;
  readonly content: {
    readonly 'application/json': { readonly schema: typeof ErrorRef; readonly examples: Record<string, object> };
  };
}

/** Error responses of an operation, each with an example per code it may carry. */
export function errorResponses(...statuses: readonly ErrorStatus[]): Record<number, ErrorResponse> {
  const responses: Record<number, ErrorResponse> = {};
  for (const status of [...statuses, 405, 417, 500, 503] as const)
    responses[status] = errorResponse(ERROR_RESPONSES[status]);
  // Every request may be refused for its Host, a query parameter or a body the operation does not take.
  responses[400] ??= errorResponse(INPUT_REFUSED);
  return responses;
}

/**
 * An error response of one operation's own, where the shared one of its status does not say what it
 * answers (the 409 of creating a key is `key_limit`, not a retry in flight).
 */
export function ownErrorResponse(description: string, ...codes: readonly HttpErrorCode[]): ErrorResponse {
  return errorResponse({ description, codes });
}

function errorResponse(spec: ErrorResponseSpec): ErrorResponse {
  const examples = Object.fromEntries(spec.codes.map((code) => [code, { value: errorExample(code) }]));
  return {
    description: spec.description,
    headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS, ...(spec.headers ?? [])),
    content: { 'application/json': { schema: ErrorRef, examples } },
  };
}
