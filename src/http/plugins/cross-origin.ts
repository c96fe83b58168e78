import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';

/**
 * What browsers may read from responses when CORS is on: rate limits, Retry-After, Link, deprecation,
 * request id, and the ETag to send back in If-None-Match.
 */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Link',
  'Location',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  'X-Request-Id',
  'ETag',
];

/** Request headers browsers may send when CORS is on, besides the CORS-safelisted ones. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'];

export interface CrossOriginOptions {
  /** CORS_ORIGINS; none turns CORS off. */
  readonly origins: readonly string[];
  /** CORS_MAX_AGE_SECONDS: how long a browser keeps a preflight's answer before it asks again. */
  readonly maxAgeSeconds: number;
}

/**
 * CORS for the origins of CORS_ORIGINS. Registered before authentication, so that preflight requests
 * need no key. A preflight is an OPTIONS request with `Origin` and `Access-Control-Request-Method`
 * (the Fetch standard), the only kind browsers send; any other OPTIONS is an ordinary request,
 * answered as with CORS off (after authentication: 405 with Allow on a path of the API), rather
 * than with @fastify/cors's bare 400 "Invalid Preflight Request".
 */
export const crossOrigin = fastifyPlugin<CrossOriginOptions>(
  async (app: FastifyInstance, options: CrossOriginOptions) => {
    if (options.origins.length === 0) return;
    const withPreflight: FastifyCorsOptions = {
      origin: [...options.origins],
      exposedHeaders: EXPOSED_HEADERS,
      allowedHeaders: ALLOWED_HEADERS,
      maxAge: options.maxAgeSeconds,
    };
    const withoutPreflight: FastifyCorsOptions = { ...withPreflight, preflight: false };
    await app.register(cors, {
      // Two parameters: @fastify/cors tells a callback delegator from a promise one by its length.
      delegator: (request, callback) => callback(null, isOrdinaryOptions(request) ? withoutPreflight : withPreflight),
    });
  },
  { name: 'cross-origin' },
);

/** An OPTIONS request that is not a preflight: without Origin or Access-Control-Request-Method. */
function isOrdinaryOptions(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' &&
    (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined)
  );
}
