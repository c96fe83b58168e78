/** Accounts as storage keeps them, and the part of the storage seam that reads and writes them. */
import type { StoredLimits } from './limit-windows.ts';
import type { Plan } from './plans.ts';

/** A page of accounts, oldest first (ascending id). */
export interface AccountPageQuery {
  /** Only accounts with an id strictly greater than this (0 for the first page). */
  readonly afterId: number;
  readonly limit: number;
  /**
   * Only accounts whose name contains this, ignoring the case of ASCII letters (names are ASCII);
   * `%`, `_` and `\` are matched as themselves. Undefined: every account.
   */
  readonly nameContains: string | undefined;
}

/** An account; its own limits, a field per window (StoredLimits), are only set on the enterprise plan. */
export type AccountRecord = NewAccount & {
  readonly id: number;
  readonly createdAt: number;
  /** How many active keys the account may hold: its holder's keys cannot create past it (DEFAULT_KEY_LIMIT). */
  readonly keyLimit: number;
};

/** The limit of active keys of an account the operator has not set one for. */
export const DEFAULT_KEY_LIMIT = 20;
/** The highest limit of active keys an operator may set. */
export const MAX_KEY_LIMIT = 10_000;

export type NewAccount = StoredLimits & {
  readonly name: string;
  readonly plan: Plan;
};

export interface AccountStore {
  /** Throws ConflictError when the name is taken. */
  create(account: NewAccount, now: number): Promise<AccountRecord>;
  findByName(name: string): Promise<AccountRecord | undefined>;
  list(): Promise<AccountRecord[]>;
  /** At most `limit` accounts in ascending id order. */
  page(query: AccountPageQuery): Promise<AccountRecord[]>;
  /** Returns the updated account, or undefined when no account has that name. */
  setPlan(name: string, plan: Plan, limits: StoredLimits): Promise<AccountRecord | undefined>;
  /** Returns the updated account, or undefined when no account has that name. */
  setKeyLimit(name: string, keyLimit: number): Promise<AccountRecord | undefined>;
  count(): Promise<number>;
  /**
   * What each account's keys add up to at `now`, by account id, in one query; accounts without keys
   * are absent. With `accountIds`, only those accounts'.
   */
  keyStats(now: number, accountIds?: readonly number[]): Promise<Map<number, AccountKeyStats>>;
}

/** What an account's keys add up to, for listings of many accounts in one query. */
export interface AccountKeyStats {
  readonly total: number;
  /** Neither revoked nor expired (a banned key still counts: its ban ends). */
  readonly active: number;
  /** The latest last-used time of any of its keys. */
  readonly lastUsedAt: number | null;
}
