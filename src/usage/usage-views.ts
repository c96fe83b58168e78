import type { DeprecatedUsage, UsagePoint, UsageRange } from './usage-service.ts';
import type { UsageHistoryView } from './usage-schemas.ts';

/**
 * The usage service's records as both APIs send them (public and admin): times as ISO 8601
 * strings, fields in the order of their schemas.
 */

export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

export function historyView(range: UsageRange, points: readonly UsagePoint[]): UsageHistoryView {
  return {
    from: isoOf(range.from),
    to: isoOf(range.to),
    granularity: range.granularity,
    points: points.map((point) => ({
      at: isoOf(point.at),
      operation: point.operation,
      outcome: point.outcome,
      count: point.count,
    })),
  };
}

/** The deprecated calls of one operation, with the keys that made them. */
export interface DeprecatedUsageView {
  readonly operation: DeprecatedUsage['operation'];
  readonly sunset: string;
  readonly since: string;
  readonly calls: number;
  readonly lastCall: string | null;
  readonly keys: { id: string; calls: number; lastCall: string }[];
}

export function deprecatedUsageView(entry: DeprecatedUsage): DeprecatedUsageView {
  return {
    operation: entry.operation,
    sunset: isoOf(entry.sunset),
    since: isoOf(entry.since),
    calls: entry.calls,
    lastCall: entry.lastCall === null ? null : isoOf(entry.lastCall),
    keys: entry.keys.map((key) => ({ id: key.keyId, calls: key.calls, lastCall: isoOf(key.lastCall) })),
  };
}
