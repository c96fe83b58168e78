/** The plans an account can be on; each sets its limits (domain/limit-windows.ts). */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
