import { Type } from 'typebox';

/** Response headers shared by every authenticated response, for the OpenAPI document. */
export const rateLimitHeaders = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Limit of the most constraining window.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in that window (never below 0).' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix time, in seconds, when that window resets.' },
  'RateLimit-Policy': {
    type: 'string',
    description: 'IETF draft: both windows, e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.',
  },
  RateLimit: {
    type: 'string',
    description: 'IETF draft: both windows, e.g. `"minute";r=59;t=42, "day";r=998;t=51000`.',
  },
} as const;

const DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`; the message names the field.',
  401: 'The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`.',
  404: 'No such resource (`not_found`).',
  405: 'The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods.',
  409: 'A request with the same Idempotency-Key is still in flight (`idempotency_in_flight`).',
  410: 'The operation has been removed (`gone`).',
  413: 'The body exceeds 16 KiB (`payload_too_large`).',
  415: 'The body is not `application/json` (`unsupported_media_type`).',
  422: 'The Idempotency-Key was used with a different body (`idempotency_conflict`).',
  429: 'Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds.',
  500: 'Unexpected failure (`internal_error`); no internals are shown.',
  503: 'Storage is unreachable (`service_unavailable`); retry later.',
};

/** Error responses of an operation; 500 and 503 apply to every operation. */
export function errorResponses(...statuses: number[]): Record<number, object> {
  const responses: Record<number, object> = {};
  for (const status of [...statuses, 500, 503]) {
    const headers: Record<string, object> = { ...rateLimitHeaders };
    if (status === 429)
      headers['Retry-After'] = { type: 'integer', description: 'Seconds to wait before retrying (at least 1).' };
    if (status === 401) headers['WWW-Authenticate'] = { type: 'string', description: 'RFC 6750 Bearer challenge.' };
    responses[status] = {
      description: DESCRIPTIONS[status] ?? 'Error.',
      headers,
      content: { 'application/json': { schema: Type.Ref('Error') } },
    };
  }
  return responses;
}
