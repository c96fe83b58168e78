/**
 * An account's limit windows, defined once: `LIMIT_WINDOWS`. Every form of them is made from this
 * table, or fails to compile when it disagrees: the limits of each plan, the stored limits of an
 * enterprise account (the record types below, and storage's columns, storage/limit-columns.ts), the
 * rate-limit headers and both limiters (ratelimit/rate-limit-policy.ts), GET /v1/usage's `windows`,
 * the admin API's limits and plan fields, the CLI's flags, its help and its output, and the console's
 * inputs.
 *
 * The service runs on a table given to the composition root (this one unless told), derived once at
 * start-up: it must hold every window of this one, and may add more (a test adds one per hour).
 */
import type { Plan } from './plans.ts';

/** The plans whose limits the table sets; an enterprise account's are agreed and stored with it. */
export type StandardPlan = Exclude<Plan, 'enterprise'>;

/** One window: a fixed span aligned to UTC (minutes, midnights) in which an account's requests are counted. */
export interface LimitWindow {
  /** Its field in an account's limits: records, the admin API, the CLI's JSON, the audit trail (`perMinute`). */
  readonly field: string;
  /** Its name in the rate-limit headers and in GET /v1/usage's `windows`; the prose says `per <name>`. */
  readonly name: string;
  /** Its length; a window starts at a multiple of it since the epoch. */
  readonly seconds: number;
  /** The CLI's option for an enterprise account's own limit, without its dashes (`per-minute`). */
  readonly flag: string;
  /** Requests each plan allows in it. */
  readonly plans: Readonly<Record<StandardPlan, number>>;
}

export type LimitWindows = readonly LimitWindow[];

/**
 * The windows, in the order the headers list them. A new one is a row here; then `tsc` asks for its
 * stored column (a migration, storage/limit-columns.ts) and its words in the console.
 */
export const LIMIT_WINDOWS = [
  {
    field: 'perMinute',
    name: 'minute',
    seconds: 60,
    flag: 'per-minute',
    plans: { free: 60, pro: 300, business: 1_000 },
  },
  {
    field: 'perDay',
    name: 'day',
    seconds: 86_400,
    flag: 'per-day',
    plans: { free: 1_000, pro: 10_000, business: 100_000 },
  },
] as const satisfies LimitWindows;

type Windows = (typeof LIMIT_WINDOWS)[number];
export type WindowField = Windows['field'];
export type WindowName = Windows['name'];

/** An account's limit in each window, by field: every window of `LIMIT_WINDOWS`, and those a given table adds. */
export type WindowLimits = { readonly [F in WindowField]: number } & { readonly [field: string]: number };

/** An enterprise account's own limits, as stored with it: null on every other plan. */
export type StoredLimits = { readonly [F in WindowField]: number | null };

/** A value per window, keyed by its field or name, in the table's order. */
export type ByWindow<K extends 'field' | 'name', V> = { readonly [N in Windows[K]]: V } & {
  readonly [key: string]: V;
};

/**
 * A value per window of `windows`, keyed by `key`. Every window of `LIMIT_WINDOWS` is among them:
 * `checkLimitWindows` holds the table the service runs on to that, once, at start-up.
 */
export function byWindow<K extends 'field' | 'name', V>(
  windows: LimitWindows,
  key: K,
  value: (window: LimitWindow, index: number) => V,
): ByWindow<K, V> {
  const entries: Record<string, V> = {};
  windows.forEach((window, index) => {
    entries[window[key]] = value(window, index);
  });
  return entries as ByWindow<K, V>;
}

/**
 * Refuses a table the service cannot run on: one without a window of `LIMIT_WINDOWS` (every typed
 * reader expects it), or with two windows of one field, name or flag, or a length or limit that is
 * not a positive integer.
 */
export function checkLimitWindows(windows: LimitWindows): LimitWindows {
  for (const wanted of LIMIT_WINDOWS) {
    const found = windows.find((window) => window.field === wanted.field);
    if (found?.name !== wanted.name || found.flag !== wanted.flag || found.seconds !== wanted.seconds)
      throw new Error(`the limit windows must hold ${wanted.field} as LIMIT_WINDOWS defines it`);
  }
  for (const key of ['field', 'name', 'flag'] as const) {
    const values = windows.map((window) => window[key]);
    if (new Set(values).size !== values.length) throw new Error(`two limit windows share a ${key}`);
  }
  for (const window of windows) {
    const counts = [window.seconds, ...Object.values(window.plans)];
    if (!counts.every((count) => Number.isSafeInteger(count) && count > 0))
      throw new Error(`the ${window.field} window needs positive integers for its length and limits`);
  }
  return Object.freeze([...windows]);
}

/** An enterprise account's own limit in a window: null when none is stored (storage may keep no column for it). */
export function storedLimit(limits: StoredLimits, window: LimitWindow): number | null {
  const byField: Readonly<Partial<Record<string, number | null>>> = limits;
  return byField[window.field] ?? null;
}

/** An account's effective limits: its plan's, or on enterprise its own (0 in a window it has none for). */
export function limitsFor(windows: LimitWindows, account: { readonly plan: Plan } & StoredLimits): WindowLimits {
  const { plan } = account;
  return plan === 'enterprise' ? ownLimits(windows, account) : planLimits(windows, plan);
}

export function planLimits(windows: LimitWindows, plan: StandardPlan): WindowLimits {
  return byWindow(windows, 'field', (window) => window.plans[plan]);
}

/** An enterprise account's limits: its own, 0 in a window it has none for. */
export function ownLimits(windows: LimitWindows, limits: StoredLimits): WindowLimits {
  return byWindow(windows, 'field', (window) => storedLimit(limits, window) ?? 0);
}

/** The plans whose limits the table sets. */
export const STANDARD_PLANS: readonly StandardPlan[] = ['free', 'pro', 'business'];

/** Names as prose lists them: `a`, `a and b`, `a, b and c`. */
export function listed(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}
