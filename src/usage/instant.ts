import { ValidationError } from '../errors.ts';

/** A date (2026-11-25) or a date-time with its offset (2026-11-25T10:00:00Z, …+01:00), by parts. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/**
 * The instant a history query parameter names, in milliseconds since the epoch. Each part is held to
 * the calendar and the clock before the text is read as a date: Date.parse rolls 2026-02-30 over to
 * 2026-03-02 and T24:00 to the next day, which would answer for a range the caller did not ask for.
 * ValidationError (invalid_query) names the parameter and what is wrong.
 */
export function parseInstant(name: string, value: string): number {
  const parts = INSTANT.exec(value);
  const part = (index: number): number => Number(parts?.[index] ?? 0);
  const problem =
    parts === null
      ? undefined
      : (calendarProblem(part(1), part(2), part(3)) ??
        clockProblem('hours', part(4), 23) ??
        clockProblem('minutes', part(5), 59) ??
        clockProblem('seconds', part(6), 59) ??
        clockProblem("an offset's hours", part(7), 23) ??
        clockProblem("an offset's minutes", part(8), 59));
  if (problem !== undefined) {
    throw new ValidationError('invalid_query', `${name} ${problem} (got ${JSON.stringify(value)})`);
  }
  const at = parts === null ? Number.NaN : Date.parse(value);
  if (Number.isNaN(at)) {
    throw new ValidationError(
      'invalid_query',
      `${name} must be an ISO 8601 date or date-time with its offset, ` +
        `e.g. 2026-11-25 or 2026-11-25T10:00:00Z (got ${JSON.stringify(value)})`,
    );
  }
  return at;
}

/** Why the date does not exist: `is not a date that exists: …`; undefined when it does. */
function calendarProblem(year: number, month: number, day: number): string | undefined {
  const monthName = MONTHS[month - 1];
  if (monthName === undefined) return 'is not a date that exists: months run from 01 to 12';
  // Day 0 of the next month is the last day of this one; setUTCFullYear keeps years 0-99 as they are.
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  const days = last.getUTCDate();
  if (day < 1 || day > days)
    return `is not a date that exists: ${monthName} ${String(year).padStart(4, '0')} has days 01 to ${days}`;
  return undefined;
}

/** Why the time does not exist; undefined when it does. */
function clockProblem(unit: string, value: number, highest: number): string | undefined {
  return value > highest ? `is not a time that exists: ${unit} run from 00 to ${highest}` : undefined;
}
