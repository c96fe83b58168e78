import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { Clock } from '../../clock.ts';
import type { UsageOutcome } from '../../domain/usage.ts';
import type { TalliedRequest } from '../../usage/usage-tally.ts';

export interface UsageTallyOptions {
  /** Counts one answered request; false when it could not be counted (the tally is full). */
  readonly count: (request: TalliedRequest) => boolean;
  readonly clock: Clock;
  readonly onUncounted?: () => void;
}

/**
 * Counts every answered request of a known key (banned ones included) in the usage tally, once it
 * is sent. Only counts in memory: the flusher stores the tally off the request path.
 */
export const usageTally = fastifyPlugin<UsageTallyOptions>(
  async (app: FastifyInstance, options: UsageTallyOptions) => {
    app.addHook('onResponse', (request, reply, done) => {
      const tallied = talliedRequest(request, reply.statusCode, options.clock);
      if (tallied !== undefined && !options.count(tallied)) options.onUncounted?.();
      done();
    });
  },
  { name: 'usage-tally' },
);

function talliedRequest(request: FastifyRequest, status: number, clock: Clock): TalliedRequest | undefined {
  const { principal } = request;
  if (principal === undefined) return undefined;
  // The operation the route counts as, from its own config (src/http/route-facts.ts).
  const operation = request.routeOptions.config.usage;
  if (operation === undefined) return undefined;
  return {
    accountId: principal.accountId,
    accountName: principal.accountName,
    keyId: principal.keyId,
    operation,
    outcome: outcomeOf(status, request.refusal),
    at: clock.now(),
  };
}

function outcomeOf(status: number, refusal: FastifyRequest['refusal']): UsageOutcome {
  if (refusal === 'key_banned') return 'banned';
  if (status === 429) return '429';
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  return '2xx';
}
