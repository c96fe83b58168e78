/**
 * Generated from the OpenAPI document the service serves at /v1/openapi.json; do not edit.
 * Regenerate with `npm run -s client:generate`.
 */
/* eslint-disable max-len */

export interface paths {
  '/pets': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List pets
     * @description Pets in ascending `id` order. When more may follow, a `Link: <…>; rel="next"` header carries the URL of the next page (same filters and limit, plus an opaque `cursor`). The last page has no next link. Unknown query parameters are ignored; a repeated known parameter is refused. A full page never changes and carries an `ETag`; `If-None-Match` with it answers `304`.
     */
    get: operations['listPets'];
    put?: never;
    /**
     * Add a pet
     * @description Strict: unknown fields (`id` included) are refused. `categoryId` is any int64 and is kept digit for digit. An optional `Idempotency-Key` header makes retries safe: the same key and body return the first response; the same key with another body is 422; a retry while the first is in flight is 409. Keys are kept 24 hours per account. A 503 does not tell whether the pet was created: retried with the same key, it is created once; without a key, a retry may create it twice.
     */
    post: operations['createPet'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/pets/{petId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a pet (deprecated)
     * @deprecated
     * @description **Deprecated** since Fri, 05 Dec 2025 00:00:00 GMT; removed on Thu, 05 Dec 2030 00:00:00 GMT, after which it answers 410 `gone`. **Migration:** use `GET /v1/pets` with the `status` filter. Responses carry `Deprecation`, `Sunset` and `Link: <…>; rel="deprecation"` headers pointing here. A pet never changes: `If-None-Match` with its `ETag` answers `304`.
     */
    get: operations['getPet'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/usage': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Your account's limits, your key's state and your deprecated calls
     * @description The account's plan, both windows (limit, what is left now, reset), this key's expiry and ban, and the account's calls of deprecated operations in the last 30 days, by key (`null` while storage is unavailable: the rest answers without it). It is not counted in the account's windows: calling it spends no quota, and the rate-limit headers are those a pets request would carry, without its spending. It answers while the key is banned (this is where the ban shows). It has a small limit of its own per account (default 30 per minute, shared with `GET /usage/history`); past it, 429 `rate_limited` with `Retry-After`, and the rate-limit headers describe that limit. Counts from other instances of the service appear within a few seconds (`USAGE_FLUSH_MS`, 10 s by default); this instance's at once.
     */
    get: operations['getUsage'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/usage/history': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Your account's requests per hour or day
     * @description The requests of the caller's account, with any of its keys, per UTC hour or day, by operation and outcome; only non-zero counts. Every request with a valid key is counted, whatever its answer (refusals included), and so is this one. The range is `[from, to)`, widened to whole buckets; it must not be empty and spans at most 90 days (2,160 hourly buckets). Unknown query parameters are ignored; a repeated one is refused. Like `GET /usage`, it spends no quota and shares its small limit. Counts from other instances of the service appear within a few seconds (`USAGE_FLUSH_MS`, 10 s by default); this instance's at once.
     */
    get: operations['getUsageHistory'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List your account's keys
     * @description The keys of the caller's account, oldest first, revoked and expired ones included; never a secret. When more may follow, a `Link: <…>; rel="next"` header carries the URL of the next page (same limit, plus an opaque `cursor`). Unknown query parameters are ignored; a repeated known parameter is refused.
     */
    get: operations['listKeys'];
    put?: never;
    /**
     * Create a key
     * @description A new key of the caller's account, with a name, scopes and an optional expiry. The answer carries the key itself, once: store it now. A key gives only scopes it holds: naming another is 403 `insufficient_scope`, naming it. The account holds at most its limit of active keys (20 unless the operator set another); past it, 409 `key_limit`. An optional `Idempotency-Key` header makes retries safe, as for creating a pet: the same key and body return the first answer, secret included, and mint no second key; with another body, or from another key of the account, it is 422 `idempotency_conflict`. The answer is kept 24 hours, sealed with the calling key, so only that key can have it replayed. A 503 does not tell whether the key was made: retry with the same Idempotency-Key.
     */
    post: operations['createKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/keys/{keyId}/revoke': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Revoke a key
     * @description Revokes a key of the caller's account; a key may revoke itself. This instance refuses it at once, every other within `KEY_CACHE_TTL_MS` (at most 1 s). Revoking twice keeps the first time. Another account's key id is 404, as an unknown one. It takes no body.
     */
    post: operations['revokeKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/keys/{keyId}/roll': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Roll a key: a new one with the same name and scopes
     * @description For a key that leaked, or is due for rotation: a new key with the old one's name and scopes (and, if the old one had an expiry, the same lifetime from now), and the old key expires at the end of the grace period: `gracePeriodSeconds`, 0 (at once) to 604800 (7 days), default 86400 (24 hours); an earlier expiry of its own is kept. Deploy the new key, then let the old one expire or revoke it. The old key must be active (else 409 `key_inactive`); its scopes must be ones the caller holds (else 403 `insufficient_scope`); another account's key id is 404. The new key replaces the old one, so it needs no room under the limit of active keys. An optional `Idempotency-Key` header makes retries safe, as for creating a pet: the same key and body return the first answer, secret included, and mint no second key; with another body, or from another key of the account, it is 422 `idempotency_conflict`. The answer is kept 24 hours, sealed with the calling key, so only that key can have it replayed. A 503 does not tell whether the key was made: retry with the same Idempotency-Key.
     */
    post: operations['rollKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    /**
     * @description Availability of a pet.
     * @example available
     * @enum {string}
     */
    PetStatus: 'available' | 'pending' | 'sold';
    /** @description Body of createPet. Any other field, `id` included, is refused. */
    NewPet: {
      /**
       * @description The animal's name: 1 to 200 characters, no control characters.
       * @example Rex
       */
      name: string;
      /**
       * Format: int64
       * @description Category of the animal. Any int64; values beyond 2^53 are kept digit for digit.
       * @example 3
       */
      categoryId: number | bigint;
      status?: components['schemas']['PetStatus'];
    };
    /** @description A pet. `status` is absent when the pet was created without one. */
    Pet: {
      /**
       * Format: int64
       * @description Assigned by the service; positive and increasing.
       */
      id: number | bigint;
      /**
       * @description The animal's name: 1 to 200 characters, no control characters.
       * @example Rex
       */
      name: string;
      /**
       * Format: int64
       * @description Category of the animal.
       * @example 3
       */
      categoryId: number | bigint;
      status?: components['schemas']['PetStatus'];
    };
    /** @description A page of pets in ascending id order. */
    Pets: components['schemas']['Pet'][];
    Error: {
      /**
       * @description Machine-readable error code.
       * @enum {string}
       */
      code:
        | 'invalid_json'
        | 'invalid_body'
        | 'invalid_query'
        | 'invalid_path'
        | 'invalid_host'
        | 'unauthorized'
        | 'insufficient_scope'
        | 'not_found'
        | 'gone'
        | 'method_not_allowed'
        | 'unsupported_media_type'
        | 'payload_too_large'
        | 'idempotency_conflict'
        | 'idempotency_in_flight'
        | 'key_limit'
        | 'key_inactive'
        | 'request_timeout'
        | 'expectation_failed'
        | 'headers_too_large'
        | 'rate_limited'
        | 'key_banned'
        | 'internal_error'
        | 'method_not_implemented'
        | 'service_unavailable';
      /** @description What was wrong, and where. */
      message: string;
      /** @description The HTTP status code. */
      status: number;
    };
    /** @description Where the caller's account and key stand; reading it spends none of the account's quota. */
    Usage: {
      account: {
        /** @description The account's unique name. */
        name: string;
        /**
         * @description The plan that sets the limits.
         * @enum {string}
         */
        plan: 'free' | 'pro' | 'business' | 'enterprise';
      };
      windows: {
        /** @description The UTC-minute window of the account. */
        minute: {
          /** @description Requests allowed per minute. */
          limit: number;
          /** @description Requests left now; this call spent none. */
          remaining: number;
          /** @description Unix time, in seconds, when the window resets. */
          reset: number;
        };
        /** @description The UTC-day window of the account. */
        day: {
          /** @description Requests allowed per day. */
          limit: number;
          /** @description Requests left now; this call spent none. */
          remaining: number;
          /** @description Unix time, in seconds, when the window resets. */
          reset: number;
        };
      };
      /** @description The key of this request. */
      key: {
        /** @description The key's non-secret id, as `key list` shows it. */
        id: string;
        expiresAt: string | null;
        /** @description What the key may do: each operation names the scope it needs. Fixed at issue. */
        scopes: ('pets:read' | 'pets:write' | 'usage:read' | 'keys:manage')[];
        ban: {
          /**
           * Format: date-time
           * @description When the ban ends.
           */
          until: string;
          /** @description Seconds until the ban ends. */
          retryAfter: number;
        } | null;
      };
      deprecated:
        | {
            /**
             * @description The `operationId` of the deprecated operation (today only `getPet`).
             * @example getPet
             */
            operation: string;
            /**
             * Format: date-time
             * @description When the operation is removed; from then on it answers 410 `gone`.
             */
            sunset: string;
            /**
             * Format: date-time
             * @description The start of the period counted, 30 days ago; calls are counted per UTC hour, from the hour that holds it.
             */
            since: string;
            /** @description The account's calls of the operation since `since`, all keys. */
            calls: number;
            lastCall: string | null;
            /** @description The keys that made those calls, most calls first. */
            keys: {
              /** @description The key's non-secret id. */
              id: string;
              /** @description Its calls of the operation since `since`. */
              calls: number;
              /**
               * Format: date-time
               * @description Its latest call of the operation.
               */
              lastCall: string;
            }[];
          }[]
        | null;
    };
    /** @description The requests of the caller's account, all keys, per UTC hour or day. */
    UsageHistory: {
      /**
       * Format: date-time
       * @description Start of the first bucket (inclusive): `from` of the request, rounded down to its bucket.
       */
      from: string;
      /**
       * Format: date-time
       * @description End of the last bucket (exclusive): `to` of the request, rounded up to its bucket.
       */
      to: string;
      /**
       * @description The length of each bucket (UTC).
       * @enum {string}
       */
      granularity: 'hour' | 'day';
      /** @description Non-zero counts only, by `at`, then `operation`, then `outcome` (in alphabetical order): a bucket without requests has no point. */
      points: {
        /**
         * Format: date-time
         * @description Start of the bucket.
         */
        at: string;
        /**
         * @description The operation called; `usage` is `GET /usage` and `GET /usage/history`.
         * @enum {string}
         */
        operation: 'listPets' | 'createPet' | 'getPet' | 'usage' | 'keys';
        /**
         * @description How it was answered: `2xx`, `4xx` (other than 429), `429` (`rate_limited`), `banned` (`key_banned`) or `5xx`.
         * @enum {string}
         */
        outcome: '2xx' | '4xx' | '429' | 'banned' | '5xx';
        /** @description Requests in the bucket with that operation and outcome. */
        count: number;
      }[];
    };
    /** @description A key of the caller's account, without its secret. */
    Key: {
      /**
       * @description The key's non-secret id.
       * @example key_3kq9x2m7w1Jd8QpZ
       */
      id: string;
      /** @description What its holder called it; null for a key the operator issued without one. */
      name: string | null;
      /** @description What the key may do; fixed when it was created. */
      scopes: ('pets:read' | 'pets:write' | 'usage:read' | 'keys:manage')[];
      createdBy:
        | {
            /** @enum {string} */
            kind: 'operator';
          }
        | {
            /** @enum {string} */
            kind: 'key';
            /**
             * @description The key of the account that did it.
             * @example key_3kq9x2m7w1Jd8QpZ
             */
            id: string;
          };
      /** @description Who revoked it; null if it was not. */
      revokedBy:
        | (
            | {
                /** @enum {string} */
                kind: 'operator';
              }
            | {
                /** @enum {string} */
                kind: 'key';
                /**
                 * @description The key of the account that did it.
                 * @example key_3kq9x2m7w1Jd8QpZ
                 */
                id: string;
              }
          )
        | null;
      /**
       * Format: date-time
       * @description When the key was created.
       */
      createdAt: string;
      lastUsedAt: string | null;
      expiresAt: string | null;
      revokedAt: string | null;
    };
    /** @description A page of the account's keys, oldest first. */
    Keys: components['schemas']['Key'][];
    /** @description A new key, with its secret. */
    CreatedKey: {
      /** @description The new key itself: in this answer only (and its replay to the same caller), never again. */
      key: string;
      /**
       * @description The key's non-secret id.
       * @example key_3kq9x2m7w1Jd8QpZ
       */
      id: string;
      /** @description What its holder called it; null for a key the operator issued without one. */
      name: string | null;
      /** @description What the key may do; fixed when it was created. */
      scopes: ('pets:read' | 'pets:write' | 'usage:read' | 'keys:manage')[];
      createdBy:
        | {
            /** @enum {string} */
            kind: 'operator';
          }
        | {
            /** @enum {string} */
            kind: 'key';
            /**
             * @description The key of the account that did it.
             * @example key_3kq9x2m7w1Jd8QpZ
             */
            id: string;
          };
      /** @description Who revoked it; null if it was not. */
      revokedBy:
        | (
            | {
                /** @enum {string} */
                kind: 'operator';
              }
            | {
                /** @enum {string} */
                kind: 'key';
                /**
                 * @description The key of the account that did it.
                 * @example key_3kq9x2m7w1Jd8QpZ
                 */
                id: string;
              }
          )
        | null;
      /**
       * Format: date-time
       * @description When the key was created.
       */
      createdAt: string;
      lastUsedAt: string | null;
      expiresAt: string | null;
      revokedAt: string | null;
    };
    /** @description Body of createKey. Any other field is refused. */
    NewKey: {
      /**
       * @description What you call the key: 1 to 100 characters, no control characters.
       * @example dashboard
       */
      name: string;
      /** @description What the new key may do: one or more scopes, each held by the calling key; `keys:manage` only if named. */
      scopes: ('pets:read' | 'pets:write' | 'usage:read' | 'keys:manage')[];
      /**
       * @description Seconds from now until the key expires, 60 to 315360000 (ten years); absent: never.
       * @example 7776000
       */
      expiresInSeconds?: number;
    };
    /** @description Body of rollKey: `{}` for the default grace period. Any other field is refused. */
    RollKey: {
      /**
       * @description How long the old key keeps working, in seconds: 0 (it stops at once) to 604800 (7 days); absent: 86400 (24 hours).
       * @example 3600
       */
      gracePeriodSeconds?: number;
    };
  };
  responses: never;
  parameters: {
    /** @description ETags of copies the client holds (`"…", W/"…"`, or `*`). When one matches the current content, in any content coding, the answer is `304` without a body. The request counts against the rate limits like any other. */
    IfNoneMatch: string;
  };
  requestBodies: never;
  headers: {
    /** @description Limit of the most constraining window. */
    'X-RateLimit-Limit': number;
    /** @description Requests left in that window (never below 0). */
    'X-RateLimit-Remaining': number;
    /** @description Unix time, in seconds, when that window resets. */
    'X-RateLimit-Reset': number;
    /** @description IETF draft: both windows, e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
    'RateLimit-Policy': string;
    /** @description IETF draft: both windows, e.g. `"minute";r=59;t=42, "day";r=998;t=51000`. */
    RateLimit: string;
    /** @description Seconds to wait before retrying (at least 1). */
    'Retry-After': number;
    /** @description RFC 6750 Bearer challenge. */
    'WWW-Authenticate': string;
    /** @description URL of the new pet. */
    Location: string;
    /** @description RFC 8288 links: `rel="next"` on a page that may be followed, `rel="deprecation"` on getPet. */
    Link: string;
    /** @description RFC 9745 date of deprecation, `@<unix seconds>`. */
    Deprecation: string;
    /** @description RFC 8594 removal date, an HTTP date. */
    Sunset: string;
    /** @description Present, with `true`, when the response replays the first one for this Idempotency-Key. */
    'Idempotent-Replayed': 'true';
    /** @description The methods the path accepts. */
    Allow: string;
    /** @description The request's id: the client's own `X-Request-Id` when it is 1 to 128 visible ASCII characters (sent once), otherwise a new one. The service logs it with the request; quote it when reporting a problem. */
    'X-Request-Id': string;
    /** @description `no-store` on every response of the API (errors included): answers to a key are never stored by any cache. The public documents (`/openapi.json`, `/docs`) are `public, max-age=300`. */
    'Cache-Control': string;
    /** @description Strong validator of the body: the same for the same content on every instance. Each content coding has its own (`"…-br"`, `"…-gzip"`). Send it back in `If-None-Match` to get `304` while it is current. */
    ETag: string;
    /** @description Lists `Accept-Encoding` when the body, of 1 KB or more, may be sent compressed (and `Origin` when cross-origin requests are allowed). */
    Vary: string;
    /** @description How the body is compressed, as the `Accept-Encoding` of the request allows: `br` or `gzip`. Only bodies of 1 KB or more are compressed; without it, the body is not. */
    'Content-Encoding': 'br' | 'gzip';
  };
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  listPets: {
    parameters: {
      query?: {
        /** @description Most pets to return, from 1 to 100; 20 when absent. */
        limit?: number;
        /** @description Availability of a pet. */
        status?: components['schemas']['PetStatus'];
        /** @description Opaque position from the `next` link of the previous page. */
        cursor?: string;
      };
      header?: {
        /** @description ETags of copies the client holds (`"…", W/"…"`, or `*`). When one matches the current content, in any content coding, the answer is `304` without a body. The request counts against the rate limits like any other. */
        'If-None-Match'?: components['parameters']['IfNoneMatch'];
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of pets. */
      200: {
        headers: {
          /** @description RFC 8288 `rel="next"` link, absent on the last page. */
          Link: components['headers']['Link'];
          /** @description On a full page (one with a `next` link), which never changes; absent on the last page. */
          ETag: components['headers']['ETag'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Vary: components['headers']['Vary'];
          'Content-Encoding': components['headers']['Content-Encoding'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example [
           *       {
           *         "id": 42,
           *         "name": "Rex",
           *         "categoryId": 3,
           *         "status": "available"
           *       },
           *       {
           *         "id": 43,
           *         "name": "Tom",
           *         "categoryId": 7,
           *         "status": "pending"
           *       },
           *       {
           *         "id": 44,
           *         "name": "Luna",
           *         "categoryId": 3
           *       }
           *     ]
           */
          'application/json': components['schemas']['Pets'];
        };
      };
      /** @description Not modified: `If-None-Match` matched the current ETag. No body; the headers are those of the 200, with the ETag of the coding the 200 would have used. */
      304: {
        headers: {
          /** @description RFC 8288 `rel="next"` link, absent on the last page. */
          Link: components['headers']['Link'];
          /** @description On a full page (one with a `next` link), which never changes; absent on the last page. */
          ETag: components['headers']['ETag'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Vary: components['headers']['Vary'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createPet: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry return the first response. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Rex",
         *       "categoryId": 3,
         *       "status": "available"
         *     }
         */
        'application/json': components['schemas']['NewPet'];
      };
    };
    responses: {
      /** @description The pet was added and is durable. */
      201: {
        headers: {
          Location: components['headers']['Location'];
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "id": 42,
           *       "name": "Rex",
           *       "categoryId": 3,
           *       "status": "available"
           *     }
           */
          'application/json': components['schemas']['Pet'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description A request with the same Idempotency-Key is still in flight (`idempotency_in_flight`). */
      409: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body exceeds 16 KiB (`payload_too_large`). */
      413: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body is not `application/json` (`unsupported_media_type`). */
      415: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The Idempotency-Key was used with a different body (`idempotency_conflict`). */
      422: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getPet: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETags of copies the client holds (`"…", W/"…"`, or `*`). When one matches the current content, in any content coding, the answer is `304` without a body. The request counts against the rate limits like any other. */
        'If-None-Match'?: components['parameters']['IfNoneMatch'];
      };
      path: {
        /**
         * @description Identifier of the pet.
         * @example 42
         */
        petId: number | bigint;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The pet. */
      200: {
        headers: {
          Deprecation: components['headers']['Deprecation'];
          Sunset: components['headers']['Sunset'];
          /** @description `rel="deprecation"` link to the migration note. */
          Link: components['headers']['Link'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          ETag: components['headers']['ETag'];
          Vary: components['headers']['Vary'];
          'Content-Encoding': components['headers']['Content-Encoding'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "id": 42,
           *       "name": "Rex",
           *       "categoryId": 3,
           *       "status": "available"
           *     }
           */
          'application/json': components['schemas']['Pet'];
        };
      };
      /** @description Not modified: `If-None-Match` matched the current ETag. No body; the headers are those of the 200, with the ETag of the coding the 200 would have used. */
      304: {
        headers: {
          Deprecation: components['headers']['Deprecation'];
          Sunset: components['headers']['Sunset'];
          /** @description `rel="deprecation"` link to the migration note. */
          Link: components['headers']['Link'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          ETag: components['headers']['ETag'];
          Vary: components['headers']['Vary'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource (`not_found`). */
      404: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The operation has been removed (`gone`). */
      410: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getUsage: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The standing of the account and key. */
      200: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "account": {
           *         "name": "demo",
           *         "plan": "free"
           *       },
           *       "windows": {
           *         "minute": {
           *           "limit": 60,
           *           "remaining": 57,
           *           "reset": 1795000020
           *         },
           *         "day": {
           *           "limit": 1000,
           *           "remaining": 940,
           *           "reset": 1795046400
           *         }
           *       },
           *       "key": {
           *         "id": "key_3kq9x2m7w1",
           *         "expiresAt": "2027-01-01T00:00:00.000Z",
           *         "scopes": [
           *           "pets:read",
           *           "pets:write",
           *           "usage:read"
           *         ],
           *         "ban": null
           *       },
           *       "deprecated": [
           *         {
           *           "operation": "getPet",
           *           "sunset": "2030-12-05T00:00:00.000Z",
           *           "since": "2026-10-27T11:00:00.000Z",
           *           "calls": 42,
           *           "lastCall": "2026-11-25T10:00:00.000Z",
           *           "keys": [
           *             {
           *               "id": "key_3kq9x2m7w1",
           *               "calls": 40,
           *               "lastCall": "2026-11-25T10:00:00.000Z"
           *             },
           *             {
           *               "id": "key_8fz2p5c0qa",
           *               "calls": 2,
           *               "lastCall": "2026-11-20T16:42:10.000Z"
           *             }
           *           ]
           *         }
           *       ]
           *     }
           */
          'application/json': components['schemas']['Usage'];
        };
      };
      /** @description The request is invalid: `invalid_host`, a Host header missing, repeated or malformed; `invalid_query`, a query parameter, which this operation does not take; `invalid_body`, a body, which it does not take either. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  getUsageHistory: {
    parameters: {
      query?: {
        /** @description Start of the range, an ISO 8601 date or date-time with its offset (`Z` for UTC); rounded down to its bucket. Default: 24 hours before `to` (hour), 30 days before `to` (day). */
        from?: string;
        /** @description End of the range (exclusive), an ISO 8601 date or date-time with its offset; rounded up to its bucket. Default: the end of the current hour (or day). It must be after `from`; the range, widened to whole buckets, spans at most 90 days. */
        to?: string;
        /** @description The length of each bucket: `hour` (the default) or `day`, in UTC. */
        granularity?: 'hour' | 'day';
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The account's requests in the range. */
      200: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "from": "2026-11-25T00:00:00.000Z",
           *       "to": "2026-11-26T00:00:00.000Z",
           *       "granularity": "hour",
           *       "points": [
           *         {
           *           "at": "2026-11-25T09:00:00.000Z",
           *           "operation": "getPet",
           *           "outcome": "2xx",
           *           "count": 12
           *         },
           *         {
           *           "at": "2026-11-25T09:00:00.000Z",
           *           "operation": "listPets",
           *           "outcome": "2xx",
           *           "count": 118
           *         },
           *         {
           *           "at": "2026-11-25T10:00:00.000Z",
           *           "operation": "createPet",
           *           "outcome": "2xx",
           *           "count": 3
           *         },
           *         {
           *           "at": "2026-11-25T10:00:00.000Z",
           *           "operation": "createPet",
           *           "outcome": "4xx",
           *           "count": 1
           *         },
           *         {
           *           "at": "2026-11-25T10:00:00.000Z",
           *           "operation": "listPets",
           *           "outcome": "429",
           *           "count": 2
           *         }
           *       ]
           *     }
           */
          'application/json': components['schemas']['UsageHistory'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listKeys: {
    parameters: {
      query?: {
        /** @description Most keys to return, from 1 to 100; 20 when absent. */
        limit?: number;
        /** @description Opaque position from the `next` link of the previous page. */
        cursor?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of the account's keys. */
      200: {
        headers: {
          /** @description RFC 8288 `rel="next"` link, absent on the last page. */
          Link: components['headers']['Link'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example [
           *       {
           *         "id": "key_3kq9x2m7w1Jd8QpZ",
           *         "name": null,
           *         "scopes": [
           *           "pets:read",
           *           "pets:write",
           *           "usage:read",
           *           "keys:manage"
           *         ],
           *         "createdBy": {
           *           "kind": "operator"
           *         },
           *         "revokedBy": null,
           *         "createdAt": "2026-11-02T09:15:00.000Z",
           *         "lastUsedAt": "2026-11-25T10:04:12.000Z",
           *         "expiresAt": null,
           *         "revokedAt": null
           *       },
           *       {
           *         "id": "key_8fz2p5c0qaLm4RtY",
           *         "name": "dashboard",
           *         "scopes": [
           *           "pets:read",
           *           "usage:read"
           *         ],
           *         "createdBy": {
           *           "kind": "key",
           *           "id": "key_3kq9x2m7w1Jd8QpZ"
           *         },
           *         "revokedBy": null,
           *         "createdAt": "2026-11-20T16:40:00.000Z",
           *         "lastUsedAt": null,
           *         "expiresAt": "2027-02-18T16:40:00.000Z",
           *         "revokedAt": null
           *       }
           *     ]
           */
          'application/json': components['schemas']['Keys'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  createKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry return the first answer, the new key included, to the same calling key only, for 24 hours. */
        'idempotency-key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "dashboard",
         *       "scopes": [
         *         "pets:read",
         *         "usage:read"
         *       ],
         *       "expiresInSeconds": 7776000
         *     }
         */
        'application/json': components['schemas']['NewKey'];
      };
    };
    responses: {
      /** @description The new key, with its secret. */
      201: {
        headers: {
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "key": "pst_7Hq2LmX9cVb4Rt1NwZ8kP3sD6fG0jY5aE2uK",
           *       "id": "key_8fz2p5c0qaLm4RtY",
           *       "name": "dashboard",
           *       "scopes": [
           *         "pets:read",
           *         "usage:read"
           *       ],
           *       "createdBy": {
           *         "kind": "key",
           *         "id": "key_3kq9x2m7w1Jd8QpZ"
           *       },
           *       "revokedBy": null,
           *       "createdAt": "2026-11-20T16:40:00.000Z",
           *       "lastUsedAt": null,
           *       "expiresAt": "2027-02-18T16:40:00.000Z",
           *       "revokedAt": null
           *     }
           */
          'application/json': components['schemas']['CreatedKey'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The account holds as many active keys as it may (`key_limit`): revoke one, or let one expire. */
      409: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body exceeds 16 KiB (`payload_too_large`). */
      413: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body is not `application/json` (`unsupported_media_type`). */
      415: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The Idempotency-Key was used with a different body (`idempotency_conflict`). */
      422: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  revokeKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /**
         * @description The key's id, as GET /keys lists it.
         * @example key_8fz2p5c0qaLm4RtY
         */
        keyId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The revoked key. */
      200: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "id": "key_3kq9x2m7w1Jd8QpZ",
           *       "name": null,
           *       "scopes": [
           *         "pets:read",
           *         "pets:write",
           *         "usage:read",
           *         "keys:manage"
           *       ],
           *       "createdBy": {
           *         "kind": "operator"
           *       },
           *       "revokedBy": {
           *         "kind": "key",
           *         "id": "key_3kq9x2m7w1Jd8QpZ"
           *       },
           *       "createdAt": "2026-11-02T09:15:00.000Z",
           *       "lastUsedAt": "2026-11-25T10:04:12.000Z",
           *       "expiresAt": null,
           *       "revokedAt": "2026-11-25T11:00:00.000Z"
           *     }
           */
          'application/json': components['schemas']['Key'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource (`not_found`). */
      404: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  rollKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Makes a retry return the first answer, the new key included, to the same calling key only, for 24 hours. */
        'idempotency-key'?: string;
      };
      path: {
        /**
         * @description The key's id, as GET /keys lists it.
         * @example key_8fz2p5c0qaLm4RtY
         */
        keyId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "gracePeriodSeconds": 3600
         *     }
         */
        'application/json': components['schemas']['RollKey'];
      };
    };
    responses: {
      /** @description The new key, with its secret. */
      201: {
        headers: {
          'Idempotent-Replayed': components['headers']['Idempotent-Replayed'];
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          /**
           * @example {
           *       "key": "pst_7Hq2LmX9cVb4Rt1NwZ8kP3sD6fG0jY5aE2uK",
           *       "id": "key_8fz2p5c0qaLm4RtY",
           *       "name": "dashboard",
           *       "scopes": [
           *         "pets:read",
           *         "usage:read"
           *       ],
           *       "createdBy": {
           *         "kind": "key",
           *         "id": "key_3kq9x2m7w1Jd8QpZ"
           *       },
           *       "revokedBy": null,
           *       "createdAt": "2026-11-20T16:40:00.000Z",
           *       "lastUsedAt": null,
           *       "expiresAt": "2027-02-18T16:40:00.000Z",
           *       "revokedAt": null
           *     }
           */
          'application/json': components['schemas']['CreatedKey'];
        };
      };
      /** @description The request is invalid: `invalid_json`, `invalid_body`, `invalid_query` or `invalid_path`, the message naming the field or parameter; or `invalid_host`, a Host header missing, repeated or malformed. */
      400: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is missing or invalid (`unauthorized`); carries `WWW-Authenticate: Bearer`. */
      401: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The API key is valid but lacks the scope this operation needs (`insufficient_scope`); `WWW-Authenticate` names it. Scopes never change on a key: issue one with the scope. */
      403: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          /** @description RFC 6750 Bearer challenge: `error="insufficient_scope", scope="<needed>"`. */
          'WWW-Authenticate': components['headers']['WWW-Authenticate'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource (`not_found`). */
      404: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods. */
      405: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          Allow: components['headers']['Allow'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The key is revoked or expired (`key_inactive`), or, with the old key past its own limit already, the account holds as many active keys as it may (`key_limit`). */
      409: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body exceeds 16 KiB (`payload_too_large`). */
      413: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The body is not `application/json` (`unsupported_media_type`). */
      415: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description An `Expect` header other than `100-continue` (`expectation_failed`). */
      417: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description The Idempotency-Key was used with a different body (`idempotency_conflict`). */
      422: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Over the rate limit (`rate_limited`) or the key is banned (`key_banned`); wait `Retry-After` seconds. */
      429: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Unexpected failure (`internal_error`); no internals are shown. */
      500: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Storage is unreachable (`service_unavailable`); retry later. A creation that gets it may have been committed: retry it with the same `Idempotency-Key`. */
      503: {
        headers: {
          'X-RateLimit-Limit': components['headers']['X-RateLimit-Limit'];
          'X-RateLimit-Remaining': components['headers']['X-RateLimit-Remaining'];
          'X-RateLimit-Reset': components['headers']['X-RateLimit-Reset'];
          'RateLimit-Policy': components['headers']['RateLimit-Policy'];
          RateLimit: components['headers']['RateLimit'];
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Cache-Control': components['headers']['Cache-Control'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
}
