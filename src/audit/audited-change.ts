import type { AuditChange, AuditContext } from '../domain/audit.ts';
import type { AuditStore, AuditedTables } from '../domain/audit.ts';

/** What a change's work returns: its result, and what it did (undefined: nothing to record; a list: each in order). */
export interface ChangeDone<T> {
  readonly result: T;
  readonly change: AuditChange | readonly AuditChange[] | undefined;
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
    const changes = change === undefined ? [] : 'action' in change ? [change] : change;
    return { result, entry: by === undefined ? undefined : changes.map((done) => ({ at, ...by, ...done })) };
  });
}
