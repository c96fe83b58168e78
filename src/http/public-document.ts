import { HTTP_ERROR_CODES } from '../errors.ts';
import { petstoreVersion } from '../version.ts';
import type { ApiDocument } from './openapi.ts';
import { HEADER_COMPONENTS, PARAMETER_COMPONENTS, REQUEST_BODY_EXAMPLES } from './openapi-responses.ts';

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

/** The public API's document: its routes are the ones under /v1, served at /v1/openapi.json to anyone. */
export function publicDocument(publicBaseUrl: string): ApiDocument {
  return {
    prefix: VERSION_PREFIX,
    open: true,
    requestBodyExamples: REQUEST_BODY_EXAMPLES,
    fields: {
      servers: [{ url: `${publicBaseUrl}${VERSION_PREFIX}` }],
      info: {
        title: 'Pet store',
        version: petstoreVersion(),
        description: API_DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'pets', description: 'The animals of the store.' },
        { name: 'usage', description: "The caller's account, limits, key and recorded requests." },
        {
          name: 'keys',
          description: "The account's keys, managed by a key that holds `keys:manage`: list, create, roll, revoke.",
        },
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
  };
}
