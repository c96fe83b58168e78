import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { Clock } from '../../clock.ts';
import type { UsageOperation, UsageOutcome } from '../../domain/usage.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import type { TalliedRequest } from '../../usage/usage-tally.ts';

export interface UsageTallyOptions {
  /** Counts one answered request; false when it could not be counted (the tally is full). */
  readonly count: (request: TalliedRequest) => boolean;
  readonly clock: Clock;
  readonly onUncounted?: () => void;
  /**
   * The key an Authorization header named when this instance last verified it, if it was valid then
   * (the key cache, however old its answer): whose request a 5xx refused before verification was.
   */
  readonly knownPrincipal?: (authorization: string | undefined) => KeyPrincipal | undefined;
  /** An answer of a usage operation that no account's history counts (a metric). */
  readonly onUnattributed?: (operation: UsageOperation, outcome: UsageOutcome) => void;
}

/**
 * Counts every answer of a usage operation once it is sent: in the usage tally when its key's
 * account is known (banned keys included), otherwise through `onUnattributed`. Only counts in
 * memory: the flusher stores the tally off the request path.
 *
 * A request refused with a 5xx before its key was verified (storage did not answer the lookup, or
 * the service was shutting down) still belongs to the key's account when this instance has verified
 * that key before: the answer it had then names the account, and counting the 503s of an outage
 * where the account can see them is what the history is for.
 */
export const usageTally = fastifyPlugin<UsageTallyOptions>(
  async (app: FastifyInstance, options: UsageTallyOptions) => {
    app.addHook('onResponse', (request, reply, done) => {
      countAnswer(request, reply.statusCode, options);
      done();
    });
  },
  { name: 'usage-tally' },
);

function countAnswer(request: FastifyRequest, status: number, options: UsageTallyOptions): void {
  // The operation the route counts as, from its own config (src/http/route-facts.ts).
  const operation = request.routeOptions.config.usage;
  if (operation === undefined) return;
  const outcome = outcomeOf(status, request.refusal);
  const principal = request.principal ?? (outcome === '5xx' ? knownKey(request, options) : undefined);
  if (principal === undefined) {
    options.onUnattributed?.(operation, outcome);
    return;
  }
  const counted = options.count({
    accountId: principal.accountId,
    accountName: principal.accountName,
    keyId: principal.keyId,
    operation,
    outcome,
    at: options.clock.now(),
  });
  if (!counted) options.onUncounted?.();
}

function knownKey(request: FastifyRequest, options: UsageTallyOptions): KeyPrincipal | undefined {
  return options.knownPrincipal?.(request.headers.authorization);
}

function outcomeOf(status: number, refusal: FastifyRequest['refusal']): UsageOutcome {
  if (refusal === 'key_banned') return 'banned';
  if (status === 429) return '429';
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  return '2xx';
}
