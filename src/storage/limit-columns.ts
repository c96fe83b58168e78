import type { StoredLimits, WindowField } from '../domain/limit-windows.ts';
import type { AccountsTable, IntegerValue } from './database-schema.ts';

/**
 * The `accounts` column that keeps an enterprise account's own limit in each window of
 * `LIMIT_WINDOWS` (src/domain/limit-windows.ts): a window without one fails to compile here. A new
 * window's column comes with a migration that adds it (migrations.ts) and its type in
 * database-schema.ts.
 */
export const LIMIT_COLUMNS = {
  perMinute: 'per_minute',
  perDay: 'per_day',
} as const satisfies { readonly [F in WindowField]: keyof AccountsTable };

export type LimitColumn = (typeof LIMIT_COLUMNS)[WindowField];

const FIELDS = Object.keys(LIMIT_COLUMNS) as WindowField[];

export const LIMIT_COLUMN_LIST: readonly LimitColumn[] = Object.freeze(FIELDS.map((field) => LIMIT_COLUMNS[field]));

/** The stored limits of a row, as either driver reads integers. */
export type LimitRow = { readonly [C in LimitColumn]: IntegerValue | null };

export function storedLimitsOf(row: LimitRow): StoredLimits {
  const limits: Partial<Record<WindowField, number | null>> = {};
  for (const field of FIELDS) {
    const value = row[LIMIT_COLUMNS[field]];
    limits[field] = value === null ? null : Number(value);
  }
  return limits as StoredLimits;
}

export function limitColumnsOf(limits: StoredLimits): { [C in LimitColumn]: number | null } {
  const columns: Partial<Record<LimitColumn, number | null>> = {};
  for (const field of FIELDS) columns[LIMIT_COLUMNS[field]] = limits[field];
  return columns as { [C in LimitColumn]: number | null };
}
