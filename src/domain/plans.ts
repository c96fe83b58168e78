/** The plans an account can be on; each sets its limits. */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  readonly perMinute: number;
  readonly perDay: number;
}

/** Interface part 8. Enterprise limits are agreed per account and stored on it. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, PlanLimits>> = Object.freeze({
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
});

export function limitsFor(account: { plan: Plan; perMinute: number | null; perDay: number | null }): PlanLimits {
  if (account.plan !== 'enterprise') return PLAN_LIMITS[account.plan];
  return { perMinute: account.perMinute ?? 0, perDay: account.perDay ?? 0 };
}
