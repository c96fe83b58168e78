/**
 * The words of the audit trail: every change an operator makes, through the admin API (and so the
 * console) or the CLI, and every change an account holder makes to its keys through the public API,
 * is one entry saying when, who, what and to what, with the values before and after. An entry never
 * holds a secret: no key, token or hash.
 */
import type { AccountStore } from './accounts.ts';
import type { BanStore } from './bans.ts';
import type { KeyStore } from './keys.ts';
import type { OperatorTokenStore } from './operator-tokens.ts';
import type { IdempotencyRecords } from './pet-store.ts';

/** What was done: `<target type>.<verb>`. */
export const AUDIT_ACTIONS = [
  'account.create',
  'account.update',
  'key.create',
  'key.revoke',
  'key.roll',
  'ban.lift',
  'operator_token.create',
  'operator_token.revoke',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What a change is made to; a ban is the key's, so a lifting targets the key. */
export const AUDIT_TARGET_TYPES = ['account', 'key', 'operator_token'] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

export interface AuditTarget {
  readonly type: AuditTargetType;
  /** An account's name, a key's id, an operator token's id. */
  readonly id: string;
}

/**
 * Who made a change: an operator token (its id and label, never the token), the CLI run by an OS
 * user, or an account holder's key (its id and its account's name) through the public API.
 */
export type AuditActor =
  | { readonly kind: 'operator_token'; readonly id: string; readonly name: string | null }
  | { readonly kind: 'cli'; readonly user: string }
  | { readonly kind: 'key'; readonly id: string; readonly account: string };

/** The kinds of actors, as the trail's filters and the admin API name them. */
export const AUDIT_ACTOR_KINDS = ['operator_token', 'cli', 'key'] as const satisfies readonly AuditActor['kind'][];

/**
 * Through what a change was made: the console (a request with its session cookie), the admin API
 * (a request with a bearer operator token), the command-line tool, or the public API with a key.
 */
export const AUDIT_VIAS = ['console', 'api', 'cli', 'key'] as const;
export type AuditVia = (typeof AUDIT_VIAS)[number];

/** Who makes a change, through what, and the id of the request that asked for it (null from the CLI). */
export interface AuditContext {
  readonly actor: AuditActor;
  readonly via: AuditVia;
  readonly requestId: string | null;
}

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Values of the target that a change set, by field; times as ISO 8601 strings. */
export type AuditValues = { readonly [field: string]: JsonValue };

/** What a change did: the action, its target, and the values before and after where there were any. */
export interface AuditChange {
  readonly action: AuditAction;
  readonly target: AuditTarget;
  /** Null for a creation. */
  readonly before: AuditValues | null;
  readonly after: AuditValues | null;
}

/** A time of a record as audit values show it. */
export function auditTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** One entry of the audit trail, as stored: when, who and in which request, and what changed. */
export interface NewAuditEntry extends AuditContext, AuditChange {
  readonly at: number;
}

export interface AuditEntryRecord extends NewAuditEntry {
  /** Drawn by the database; with `at`, the entry's place in the trail. */
  readonly id: number;
}

/** Where a page of the trail ends: the next page holds the entries older than this one (by `at`, then `id`). */
export interface AuditPosition {
  readonly at: number;
  readonly id: number;
}

/** Entries matching every filter given, newest first (`at`, then `id`, descending). */
export interface AuditQuery {
  /** CLI entries (of one OS user, with `id`), or those of one operator token or key (its id). */
  readonly actor?: { readonly kind: AuditActor['kind']; readonly id?: string };
  /** Every target of a type, or the one with `id`. */
  readonly target?: { readonly type: AuditTargetType; readonly id?: string };
  readonly action?: AuditAction;
  /** Only the changes made through the console, the admin API or the CLI. */
  readonly via?: AuditVia;
  /** At or after. */
  readonly from?: number;
  /** Before. */
  readonly to?: number;
  /** Only the entries that come after this position in that order: the next page. */
  readonly olderThan?: AuditPosition;
  readonly limit: number;
}

/** The tables a change may write in the transaction of its audit entry. */
export interface AuditedTables {
  readonly accounts: AccountStore;
  readonly keys: KeyStore;
  readonly bans: BanStore;
  readonly operatorTokens: OperatorTokenStore;
  readonly idempotency: IdempotencyRecords;
}

export interface AuditedChange<T> {
  readonly result: T;
  /** The entry to store with the change, or its entries in order; undefined when there is none to record. */
  readonly entry: NewAuditEntry | readonly NewAuditEntry[] | undefined;
}

/** The audit trail of operators' changes. */
export interface AuditStore {
  /**
   * Runs `change` in one transaction over `tables` and stores the entries it returns in that same
   * transaction: all commit, or none does (a change that throws writes nothing). A row read
   * through `tables` stays locked until the commit, so the values read before a write are the ones
   * the write replaced.
   */
  change<T>(change: (tables: AuditedTables) => Promise<AuditedChange<T>>): Promise<T>;
  /** Stores an entry of a change made outside storage (a ban held by the rate limiter alone). */
  record(entry: NewAuditEntry): Promise<void>;
  list(query: AuditQuery): Promise<AuditEntryRecord[]>;
  /** Deletes the entries before `before`, as a background write; how many went, or false when busy. */
  purge(before: number): Promise<number | false>;
}
