import type { AuditChange, AuditContext } from '../domain/audit.ts';
import type { AuditStore, AuditedTables } from '../domain/audit.ts';

/** What a change's work returns: its result, and what it did (undefined: nothing to record). */
export interface ChangeDone<T> {
  readonly result: T;
  readonly change: AuditChange | undefined;
}

/**
 * Runs `work` in one transaction with the audit entry of what it did, made by `by` at `at`: the
 * change and its entry commit together or not at all, so no acknowledged change lacks its entry and
 * no failed one has one. Without `by` (the demo account made at first start, tests), nothing is recorded.
 */
export function auditedChange<T>(
  audit: AuditStore,
  by: AuditContext | undefined,
  at: number,
  work: (tables: AuditedTables) => Promise<ChangeDone<T>>,
): Promise<T> {
  return audit.change(async (tables) => {
    const { result, change } = await work(tables);
    return { result, entry: by === undefined || change === undefined ? undefined : { at, ...by, ...change } };
  });
}
