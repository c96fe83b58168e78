import {
  limitsFor,
  planLimits,
  STANDARD_PLANS,
  type LimitWindows,
  type StoredLimits,
  type WindowField,
  type WindowLimits,
} from '../domain/limit-windows.ts';
import type { Plan } from '../domain/plans.ts';
import type { WindowSpec } from './limiter.ts';
import { policyField } from './rate-limit-headers.ts';

/** Where an account's requests are counted: its subject, its windows in the table's order, and their policy field. */
export interface AccountQuota {
  readonly subject: string;
  readonly windows: readonly WindowSpec[];
  /** The RateLimit-Policy field of those windows. */
  readonly policy: string;
}

/** What an account's windows are made from: its plan and, on enterprise, its own limits. */
export type QuotaHolder = { readonly plan: Plan } & StoredLimits;

interface Limited {
  readonly limits: WindowLimits;
  readonly windows: readonly WindowSpec[];
  readonly policy: string;
}

/**
 * The accounts' windows, derived from the limit windows (src/domain/limit-windows.ts) once, when the
 * service starts: each standard plan's windows and policy field are built here and shared by every
 * account on it; an enterprise account's are made from its own limits, once per cached principal.
 */
export class AccountQuotas {
  readonly windows: LimitWindows;
  private readonly plans: ReadonlyMap<Plan, Limited>;

  constructor(windows: LimitWindows) {
    this.windows = windows;
    this.plans = new Map(STANDARD_PLANS.map((plan) => [plan, this.limited(planLimits(windows, plan))]));
  }

  /** The account's effective limits: its plan's, or on enterprise its own. */
  limitsOf(account: QuotaHolder): WindowLimits {
    return this.plans.get(account.plan)?.limits ?? limitsFor(this.windows, account);
  }

  quotaOf(accountId: number, account: QuotaHolder): AccountQuota {
    const { windows, policy } = this.plans.get(account.plan) ?? this.limited(limitsFor(this.windows, account));
    return { subject: accountSubjectOf(accountId), windows, policy };
  }

  /** Where a window of the table is among an account's windows (and the limiter's answer). */
  indexOf(field: WindowField): number {
    return this.windows.findIndex((window) => window.field === field);
  }

  private limited(limits: WindowLimits): Limited {
    const windows = Object.freeze(
      this.windows.map((window) => ({ name: window.name, limit: limits[window.field] ?? 0, seconds: window.seconds })),
    );
    return { limits, windows, policy: policyField(windows) };
  }
}

export function accountSubjectOf(accountId: number): string {
  return `account:${accountId}`;
}
