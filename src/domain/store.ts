/**
 * The storage seam: what every backend (src/storage/: SQLite and PostgreSQL, one dialect file each)
 * implements, and all the services see of storage. Each part's records and interface sit with their
 * family in this folder. Times are milliseconds since the epoch.
 */
import type { AccountStore } from './accounts.ts';
import type { AuditStore } from './audit.ts';
import type { BanStore } from './bans.ts';
import type { KeyStore } from './keys.ts';
import type { OperatorSessionStore } from './operator-sessions.ts';
import type { OperatorTokenStore } from './operator-tokens.ts';
import type { IdempotencyStore, PetStore } from './pet-store.ts';
import type { UsageStore } from './usage-counts.ts';

export interface Store {
  readonly backend: 'sqlite' | 'postgres';
  readonly pets: PetStore;
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly idempotency: IdempotencyStore;
  readonly bans: BanStore;
  readonly operatorTokens: OperatorTokenStore;
  readonly operatorSessions: OperatorSessionStore;
  readonly usage: UsageStore;
  readonly audit: AuditStore;
  /**
   * Applies pending migrations; returns how many were applied. With `through`, a migration's name,
   * stops after that one: tests build a database as an earlier release left it.
   */
  migrate(through?: string): Promise<number>;
  /** Resolves when storage answers; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
