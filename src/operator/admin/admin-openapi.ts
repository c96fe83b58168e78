import type { ApiDocument } from '../../http/openapi.ts';
import { petstoreVersion } from '../../version.ts';
import { ADMIN_ERROR_CODES, refs, type AdminErrorCode } from './admin-schemas.ts';
import { OPERATOR_COOKIE } from '../operator-auth.ts';

/** Where the admin API lives on the operator listener; its document's server URL. */
export const ADMIN_PREFIX = '/admin/v1';

const CODE_LIST = ADMIN_ERROR_CODES.map((code) => `\`${code}\``).join(', ');

const DESCRIPTION = `
The admin API of a petstore instance, on its operator listener (\`METRICS_HOST\`:\`METRICS_PORT\`), never on the
public port. Every operation needs an operator token (\`pso_…\`, made with \`petstore operator token create\`) in
\`Authorization: Bearer <operator token>\`, or the console's cookie \`${OPERATOR_COOKIE}\`, which holds the id of a
session started by \`POST /session\`. Without a valid one the answer is \`401\`; after 10 failed attempts in a minute
from one client address, every request from it is answered \`429\` with \`Retry-After\` until the minute ends. A
\`POST\`, \`PUT\`, \`PATCH\` or \`DELETE\` authenticated by the cookie must carry an \`Origin\` equal to this
listener's own origin, scheme included (\`http://<Host>\`; \`403 forbidden\` otherwise). The listener answers only
the host names it serves (\`METRICS_HOST\`, loopback names, \`OPERATOR_HOSTS\`): another \`Host\` gets
\`400 invalid_host\`.

The operations call the same services as the \`petstore\` command-line tool; changes take effect as theirs do (a
revocation made here is refused by this instance at once, and by the others within \`KEY_CACHE_TTL_MS\`).

**Errors** have the body \`{code, message, status}\`. Codes: ${CODE_LIST}.
`.trim();

/** The admin API's OpenAPI 3.1 document, apart from the public one; made from the /admin/v1 routes only. */
export const ADMIN_DOCUMENT: ApiDocument = {
  prefix: ADMIN_PREFIX,
  // Behind a token, like every admin path.
  open: false,
  fields: {
    servers: [{ url: ADMIN_PREFIX }],
    info: { title: 'Pet store admin', version: petstoreVersion(), description: DESCRIPTION },
    tags: [
      { name: 'accounts', description: 'Accounts, plans and their keys.' },
      { name: 'keys', description: 'API keys and bans.' },
      { name: 'usage', description: 'Requests counted per account, key, operation and outcome.' },
      { name: 'operator', description: 'The instance, the operator tokens, and the console session.' },
      { name: 'audit', description: 'Every change operators made, through this API, the console or the CLI.' },
    ],
    components: {
      securitySchemes: {
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An operator token: pso_, 16 letters and digits, _, 32 letters and digits.',
        },
        consoleCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: OPERATOR_COOKIE,
          description:
            "A console session's id, set by POST /session; a state-changing request must also carry this " +
            "listener's own Origin.",
        },
      },
    },
    security: [{ operatorToken: [] }, { consoleCookie: [] }],
  },
};

// ---------------------------------------------------------------------------------------------
// Responses

const JSON_TYPE = 'application/json';

const REQUEST_ID = {
  type: 'string',
  description: "The request's id: the client's own `X-Request-Id` when fit, otherwise a new one.",
} as const;
const CACHE_CONTROL = { type: 'string', description: '`no-store`: no answer of the admin API is cached.' } as const;

interface ErrorResponseSpec {
  readonly description: string;
  readonly codes: readonly AdminErrorCode[];
  readonly headers?: object;
}

const ERROR_RESPONSES: Readonly<Record<number, ErrorResponseSpec>> = {
  400: {
    description:
      'The request is invalid; the message names the field or parameter. `invalid_host`: the Host header is ' +
      'missing, repeated, malformed or names no host this listener serves.',
    codes: ['invalid_json', 'invalid_body', 'invalid_query', 'invalid_path', 'invalid_host'],
  },
  401: {
    description:
      'No valid operator token (missing, wrong or revoked) or console session (ended, idle or past its ' +
      'time): `unauthorized`, and nothing else.',
    codes: ['unauthorized'],
    headers: {
      'WWW-Authenticate': { type: 'string', description: '`Bearer realm="petstore-operator"`.' },
    },
  },
  403: {
    description: 'A state-changing request authenticated by the cookie came from another origin (`forbidden`).',
    codes: ['forbidden'],
  },
  404: { description: 'No such account or key (`not_found`).', codes: ['not_found'] },
  409: { description: 'The name is taken (`conflict`).', codes: ['conflict'] },
  413: { description: 'The body exceeds 16 KiB (`payload_too_large`).', codes: ['payload_too_large'] },
  415: { description: 'The body is not `application/json`.', codes: ['unsupported_media_type'] },
  429: {
    description: 'Too many failed authentications from this address (`rate_limited`); wait `Retry-After` seconds.',
    codes: ['rate_limited'],
    headers: { 'Retry-After': { type: 'integer', minimum: 1, description: 'Seconds to wait.' } },
  },
  500: { description: 'Unexpected failure (`internal_error`).', codes: ['internal_error'] },
  503: { description: 'Storage is unreachable (`service_unavailable`); retry later.', codes: ['service_unavailable'] },
};

/** The 400 of an operation that takes neither a body nor query parameters: what every request may get wrong. */
const HOST_REFUSED: ErrorResponseSpec = {
  description:
    'The request is invalid: `invalid_host`, the Host header is missing, repeated, malformed or names no host ' +
    'this listener serves; `invalid_query`, a query parameter, which this operation does not take; ' +
    '`invalid_body`, a body, which it does not take either.',
  codes: ['invalid_host', 'invalid_query', 'invalid_body'],
};

export type AdminErrorStatus = 400 | 403 | 404 | 409 | 413 | 415;

/** Error responses of an operation; 401, 429, 500 and 503 apply to every one, and a 400 for the Host check. */
export function adminErrors(...statuses: readonly AdminErrorStatus[]): Record<number, object> {
  const responses: Record<number, object> = {};
  for (const status of [...statuses, 401, 429, 500, 503]) {
    const spec = ERROR_RESPONSES[status];
    if (spec !== undefined) responses[status] = errorResponse(spec);
  }
  // The 400 of an operation that validates input names invalid_host too.
  responses[400] ??= errorResponse(HOST_REFUSED);
  return responses;
}

function errorResponse(spec: ErrorResponseSpec): object {
  return {
    description: spec.description,
    headers: { 'X-Request-Id': REQUEST_ID, 'Cache-Control': CACHE_CONTROL, ...spec.headers },
    content: { [JSON_TYPE]: { schema: refs.Error } },
  };
}

/** A JSON success response of `schema`, with `headers` besides those every answer has. */
export function adminAnswer(description: string, schema: object, headers: Record<string, object> = {}): object {
  return {
    description,
    headers: { 'X-Request-Id': REQUEST_ID, 'Cache-Control': CACHE_CONTROL, ...headers },
    content: { [JSON_TYPE]: { schema } },
  };
}

/** A success without a body. */
export function adminNoContent(description: string, headers: Record<string, object> = {}): object {
  return {
    type: 'null',
    description,
    headers: { 'X-Request-Id': REQUEST_ID, 'Cache-Control': CACHE_CONTROL, ...headers },
  };
}
