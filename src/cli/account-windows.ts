import type { Services } from '../composition-root.ts';
import type { AccountRecord } from '../domain/accounts.ts';

export interface WindowUsage {
  readonly name: string;
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: number;
}

/** The account's current windows, or why this process cannot know them. */
export type AccountWindows =
  | { readonly known: true; readonly windows: readonly WindowUsage[] }
  | { readonly known: false; readonly reason: string };

/** Each try waits at most the limiter's own timeout (250 ms) while the first connection is made. */
const REDIS_TRIES = 4;

/**
 * Peeks at the account's windows in the shared limiter, counting nothing. Only Redis
 * holds counters this process can see: the in-memory limiter's live inside each server process.
 */
export async function peekAccountWindows(services: Services, account: AccountRecord): Promise<AccountWindows> {
  if (services.config.redisUrl === undefined) {
    return {
      known: false,
      reason: "without REDIS_URL each server counts in its own memory; see a response's X-RateLimit-* headers",
    };
  }
  const { subject, windows } = services.quotas.quotaOf(account.id, account);
  const request = { subject, windows, peek: true };
  for (let attempt = 0; attempt < REDIS_TRIES; attempt += 1) {
    const result = await services.limiter.consume(request, services.clock.now());
    // A fallback answer comes from this process's empty memory: it would be an invented number.
    if (!result.fallback) {
      return {
        known: true,
        windows: result.windows.map(({ name, limit, remaining, resetAt }) => ({ name, limit, remaining, resetAt })),
      };
    }
  }
  return { known: false, reason: 'Redis (REDIS_URL) did not answer' };
}
