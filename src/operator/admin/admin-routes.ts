import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../auth/account-service.ts';
import type { KeyVerifier } from '../../auth/key-verifier.ts';
import type { OperatorTokenService } from '../../auth/operator-tokens.ts';
import type { Clock } from '../../clock.ts';
import type { AccountQuotas } from '../../ratelimit/account-quotas.ts';
import type { RateLimiter } from '../../ratelimit/limiter.ts';
import type { ReadinessMonitor } from '../../readiness.ts';
import type { Store } from '../../domain/store.ts';
import type { UsageService } from '../../usage/usage-service.ts';
import type { AuditService } from '../../audit/audit-service.ts';
import type { OperatorGate } from '../operator-auth.ts';
import { accountUsageRoutes } from './account-usage.ts';
import { accountRoutes } from './accounts.ts';
import { auditRoutes } from './audit.ts';
import { banRoutes } from './bans.ts';
import { keyRoutes } from './keys.ts';
import { operatorTokenRoutes } from './operator-tokens.ts';
import { sessionRoutes } from './session.ts';
import { statusRoutes } from './status.ts';
import { usageRoutes } from './usage.ts';

export interface AdminRouteOptions {
  readonly accounts: AccountService;
  /** Which storage backend the status names. */
  readonly backend: Store['backend'];
  /** This process's key cache: a revocation here takes effect here at once. */
  readonly keyVerifier: KeyVerifier;
  readonly limiter: RateLimiter;
  /** The accounts' windows, derived once at start-up from the limit windows. */
  readonly quotas: AccountQuotas;
  readonly clock: Clock;
  readonly readiness: ReadinessMonitor;
  /** Longest a readiness probe may take. */
  readonly probeTimeoutMs: number;
  readonly usage: UsageService;
  readonly gate: OperatorGate;
  readonly operatorTokens: OperatorTokenService;
  readonly audit: AuditService;
}

/**
 * The admin API: HTTP in, calls of the services the CLI calls (AccountService, the usage service),
 * HTTP out. Every route is behind the operator token (operator-auth.ts), but the session's.
 * One plugin per resource, registered in the order of the document's operations.
 */
export const adminRoutes: FastifyPluginAsync<AdminRouteOptions> = async (app, options) => {
  await app.register(sessionRoutes, options);
  await app.register(statusRoutes, options);
  await app.register(accountRoutes, options);
  await app.register(keyRoutes, options);
  await app.register(banRoutes, options);
  await app.register(accountUsageRoutes, options);
  await app.register(usageRoutes, options);
  await app.register(operatorTokenRoutes, options);
  await app.register(auditRoutes, options);
};
