/**
 * The words of the audit trail: every change an operator makes, through the admin API (and so the
 * console) or the CLI, is one entry saying when, who, what and to what, with the values before and
 * after. An entry never holds a secret: no key, token or hash.
 */

/** What was done: `<target type>.<verb>`. */
export const AUDIT_ACTIONS = [
  'account.create',
  'account.update',
  'key.create',
  'key.revoke',
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

/** Who made a change: an operator token (its id and label, never the token), or the CLI run by an OS user. */
export type AuditActor =
  | { readonly kind: 'operator_token'; readonly id: string; readonly name: string | null }
  | { readonly kind: 'cli'; readonly user: string };

/**
 * Through what a change was made: the console (a request with its session cookie), the admin API
 * (a request with a bearer operator token), or the command-line tool.
 */
export const AUDIT_VIAS = ['console', 'api', 'cli'] as const;
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
