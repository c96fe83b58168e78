/**
 * What the admin API needs of the usage service (src/usage/usage-service.ts): its range parsing and
 * its queries. Times are milliseconds since the epoch.
 */
export const USAGE_OPERATIONS = ['listPets', 'createPet', 'getPet', 'usage'] as const;
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];
export const USAGE_OUTCOMES = ['2xx', '4xx', '429', 'banned', '5xx'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];
export type Granularity = 'hour' | 'day';

export interface UsageRange {
  readonly from: number;
  readonly to: number;
  readonly granularity: Granularity;
}

export interface UsagePoint {
  readonly at: number;
  readonly operation: UsageOperation;
  readonly outcome: UsageOutcome;
  readonly count: number;
}

export interface KeyCalls {
  readonly keyId: string;
  readonly calls: number;
  readonly lastCall: number;
}

export interface DeprecatedUsage {
  readonly operation: 'getPet';
  readonly sunset: number;
  readonly since: number;
  readonly calls: number;
  readonly lastCall: number | null;
  readonly keys: readonly KeyCalls[];
}

export interface DeprecatedCaller {
  readonly account: string;
  readonly keyId: string;
  readonly calls: number;
  readonly lastCall: number;
}

export interface AccountTotals {
  readonly account: string;
  readonly requests: number;
  readonly refusals: number;
}

export interface UsageQueries {
  parseRange(raw: { from?: string | undefined; to?: string | undefined; granularity?: string | undefined }): UsageRange;
  history(accountId: number | undefined, range: UsageRange): Promise<UsagePoint[]>;
  deprecated(accountId: number): Promise<DeprecatedUsage>;
  deprecatedCallers(): Promise<DeprecatedCaller[]>;
  top(by: 'requests' | 'refusals', range: { from: number; to: number }, limit: number): Promise<AccountTotals[]>;
}
