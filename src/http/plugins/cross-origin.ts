import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
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
}

/** CORS for the origins of CORS_ORIGINS. Registered before authentication, so that preflight requests need no key. */
export const crossOrigin = fastifyPlugin<CrossOriginOptions>(
  async (app: FastifyInstance, options: CrossOriginOptions) => {
    if (options.origins.length === 0) return;
    await app.register(cors, {
      origin: [...options.origins],
      exposedHeaders: EXPOSED_HEADERS,
      allowedHeaders: ALLOWED_HEADERS,
    });
  },
  { name: 'cross-origin' },
);
