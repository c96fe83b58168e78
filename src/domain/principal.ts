import type { StoredLimits } from './limit-windows.ts';
import type { Plan } from './plans.ts';
import type { KeyScope } from './scopes.ts';

/**
 * What the hot path needs to know about a presented key, in one lookup; its account's own limits,
 * a field per window (StoredLimits), are only set on the enterprise plan.
 */
export type KeyPrincipal = StoredLimits & {
  readonly keyId: string;
  readonly accountId: number;
  readonly accountName: string;
  readonly plan: Plan;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  /** What the key may do: checked on every request from the cached principal. */
  readonly scopes: readonly KeyScope[];
  /** End of the latest unlifted ban; compare with now. */
  readonly bannedUntil: number | null;
};
