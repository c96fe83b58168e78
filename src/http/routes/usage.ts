import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { settleWithin } from '../../deadline.ts';
import { StorageUnavailableError } from '../../errors.ts';
import type { Standing } from '../../ratelimit/rate-limit-policy.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import type { UsageService } from '../../usage/usage-service.ts';
import { historyView } from '../../usage/usage-views.ts';
import { errorResponses, headerRefs, RESPONSE_HEADERS, RATE_LIMIT_HEADERS } from '../openapi-responses.ts';
import {
  USAGE_EXAMPLE,
  USAGE_HISTORY_EXAMPLE,
  UsageHistoryQuerySchema,
  UsageHistoryRef,
  UsageRef,
} from './usage-schemas.ts';
import { usageOf } from './usage-views.ts';

export interface UsageRouteOptions {
  readonly usage: UsageService;
  /** The storage timeout: GET /v1/usage waits half of it for the deprecated calls, then answers without them. */
  readonly storageTimeoutMs: number;
}

const COUNTING =
  'Counts from other instances of the service appear within a few seconds (`USAGE_FLUSH_MS`, 10 s by default); ' +
  "this instance's at once.";

/**
 * GET /v1/usage and GET /v1/usage/history: the account's standing, reported by the API key pipeline
 * (src/http/plugins/api-key-pipeline.ts), and its recorded requests from the usage service. Neither is counted in
 * the account's windows (`reportsStanding`): both share the small limit of their own.
 */
export const usageRoutes: FastifyPluginAsync<UsageRouteOptions> = async (untyped, options) => {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const { usage } = options;
  const deprecatedWaitMs = Math.ceil(options.storageTimeoutMs / 2);

  app.get(
    '/v1/usage',
    {
      config: { usage: 'usage', scope: 'usage:read', reportsStanding: true },
      schema: {
        operationId: 'getUsage',
        tags: ['usage'],
        summary: "Your account's limits, your key's state and your deprecated calls",
        description:
          "The account's plan, both windows (limit, what is left now, reset), this key's expiry and ban, and the " +
          "account's calls of deprecated operations in the last 30 days, by key (`null` while storage is " +
          'unavailable: the rest answers without it). ' +
          "It is not counted in the account's windows: calling it spends no quota, and the rate-limit headers " +
          'are those a pets request would carry, without its spending. It answers while the key is banned ' +
          '(this is where the ban shows). It has a small limit of its own per account (default 30 per minute, ' +
          'shared with `GET /usage/history`); past it, 429 `rate_limited` with `Retry-After`, and the rate-limit ' +
          `headers describe that limit. ${COUNTING}`,
        response: {
          200: {
            description: 'The standing of the account and key.',
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: UsageRef, example: USAGE_EXAMPLE } },
          },
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const { principal, standing } = standingOf(request);
      const deprecated = await readOrNull(usage.deprecated(principal.accountId), deprecatedWaitMs);
      return reply.send(usageOf(principal, standing, deprecated === null ? null : [deprecated]));
    },
  );

  app.get(
    '/v1/usage/history',
    {
      config: { usage: 'usage', scope: 'usage:read', reportsStanding: true },
      schema: {
        operationId: 'getUsageHistory',
        tags: ['usage'],
        summary: "Your account's requests per hour or day",
        description:
          "The requests of the caller's account, with any of its keys, per UTC hour or day, by operation and " +
          'outcome; only non-zero counts. Every request with a valid key is counted, whatever its answer ' +
          '(refusals included), and so is this one. The range is `[from, to)`, widened to whole buckets; it must ' +
          'not be empty and spans at most 90 days (2,160 hourly buckets). Unknown query parameters are ignored; ' +
          'a repeated one is refused. Like `GET /usage`, it spends no quota and shares its small limit. ' +
          COUNTING,
        querystring: UsageHistoryQuerySchema,
        response: {
          200: {
            description: "The account's requests in the range.",
            headers: headerRefs(...RATE_LIMIT_HEADERS, ...RESPONSE_HEADERS),
            content: { 'application/json': { schema: UsageHistoryRef, example: USAGE_HISTORY_EXAMPLE } },
          },
          ...errorResponses(400, 401, 429),
        },
      },
    },
    async (request, reply) => {
      const { principal } = standingOf(request);
      const { from, to, granularity } = request.query;
      const range = usage.parseRange({ from, to, granularity });
      const points = await usage.history(principal.accountId, range);
      return reply.send(historyView(range, points));
    },
  );
};

function standingOf(request: FastifyRequest): { principal: KeyPrincipal; standing: Standing } {
  const { principal, standing } = request;
  // Both are set before any handler runs; their absence is a wiring fault, answered as a 500.
  if (principal === undefined || standing === undefined)
    throw new Error(`${request.routeOptions.url ?? 'a usage route'} ran without its limits step`);
  return { principal, standing };
}

/**
 * The standing needs no storage, and is what a client needs most while storage is down (its windows,
 * its ban): the deprecated calls, which do, are left out rather than hold it up or turn it into a 503.
 */
async function readOrNull<T>(work: Promise<T>, waitMs: number): Promise<T | null> {
  try {
    return await settleWithin(work, waitMs, () => new StorageUnavailableError('the usage history did not answer'));
  } catch (error) {
    if (error instanceof StorageUnavailableError) return null;
    throw error;
  }
}
