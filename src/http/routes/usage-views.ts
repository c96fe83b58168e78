import type { WindowState } from '../../ratelimit/limiter.ts';
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
    windows: { minute: windowOf(standing, 'minute'), day: windowOf(standing, 'day') },
    key: {
      id: principal.keyId,
      expiresAt: principal.expiresAt === null ? null : isoOf(principal.expiresAt),
      scopes: [...principal.scopes],
      ban: ban === null ? null : { until: isoOf(ban.until), retryAfter: ban.retryAfterSeconds },
    },
    deprecated: deprecated === null ? null : deprecated.map(deprecatedUsageView),
  };
}

function windowOf(standing: Standing, name: string): Usage['windows']['minute'] {
  const window = standing.windows.find((candidate) => candidate.name === name) as WindowState;
  return { limit: window.limit, remaining: window.remaining, reset: Math.ceil(window.resetAt / 1000) };
}
