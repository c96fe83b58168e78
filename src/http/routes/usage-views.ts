import type { Standing } from '../../ratelimit/rate-limit-policy.ts';
import type { KeyPrincipal } from '../../domain/principal.ts';
import type { DeprecatedUsage } from '../../usage/usage-service.ts';
import { deprecatedUsageView, isoOf } from '../../usage/usage-views.ts';
import type { Usage } from './usage-schemas.ts';

/** GET /v1/usage's answer: the key and the standing the limits step reported, and the deprecated calls. */
export function usageOf(
  principal: KeyPrincipal,
  standing: Standing,
  deprecated: readonly DeprecatedUsage[] | null,
): Usage {
  const { ban } = standing;
  return {
    account: { name: principal.accountName, plan: principal.plan },
    windows: windowsOf(standing),
    key: {
      id: principal.keyId,
      expiresAt: principal.expiresAt === null ? null : isoOf(principal.expiresAt),
      scopes: [...principal.scopes],
      ban: ban === null ? null : { until: isoOf(ban.until), retryAfter: ban.retryAfterSeconds },
    },
    deprecated: deprecated === null ? null : deprecated.map(deprecatedUsageView),
  };
}

/**
 * The account's windows by name, as the limiter answered them: one per limit window of the table the
 * service runs on, in its order, and that table holds every window of LIMIT_WINDOWS (checkLimitWindows).
 */
function windowsOf(standing: Standing): Usage['windows'] {
  const windows: Record<string, Usage['windows'][string]> = {};
  for (const { name, limit, remaining, resetAt } of standing.windows)
    windows[name] = { limit, remaining, reset: Math.ceil(resetAt / 1000) };
  return windows as Usage['windows'];
}
