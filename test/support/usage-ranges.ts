/**
 * History ranges every usage-history endpoint (public and admin) must refuse or answer alike, since
 * one parser reads them all (UsageService.parseRange): each refused query with what its 400
 * invalid_query message must say.
 */

/** Dates and times that do not exist, which Date.parse would roll over into the next day or month. */
export const NONEXISTENT_INSTANTS: ReadonlyArray<readonly [query: string, ...mentions: string[]]> = [
  ['from=2026-02-30&to=2026-03-05', 'from is not a date that exists', 'February 2026 has days 01 to 28', '2026-02-30'],
  ['from=2023-02-29&to=2023-03-05', 'from is not a date that exists', 'February 2023 has days 01 to 28'],
  ['from=2026-04-01&to=2026-04-31', 'to is not a date that exists', 'April 2026 has days 01 to 30'],
  ['from=2026-11-01&to=2026-11-31', 'to is not a date that exists', 'November 2026 has days 01 to 30'],
  ['from=2026-05-31&to=2026-13-01', 'to is not a date that exists', 'months run from 01 to 12'],
  ['from=2026-05-31T24:00:00Z', 'from is not a time that exists', 'hours run from 00 to 23'],
  ['from=2026-05-31T23:60Z', 'from is not a time that exists', 'minutes run from 00 to 59'],
  ['from=2026-05-31T10:00Z&to=2026-05-31T23:59:60Z', 'to is not a time that exists', 'seconds run from 00 to 59'],
];

/** A leap day exists: from 2024-02-29 through the day after, by day. */
export const LEAP_DAY = { query: 'granularity=day&from=2024-02-29&to=2024-03-01', from: '2024-02-29T00:00:00.000Z' };

/**
 * 90 days as asked, more once widened to whole buckets: over the bound, which holds for the range
 * answered. By the hour, 00:00:00.001 to 00:00:00.001 is 2,161 hours (00:00 to 01:00); by the day,
 * noon to noon is 91 days.
 */
export const PAST_90_DAYS_ONCE_WIDENED: ReadonlyArray<readonly [query: string, ...mentions: string[]]> = [
  [
    'from=2026-08-28T00:00:00.001Z&to=2026-11-26T00:00:00.001Z',
    'spans more than 90 days once widened to whole hours',
    '2026-08-28T00:00:00.000Z to 2026-11-26T01:00:00.000Z',
  ],
  [
    'granularity=day&from=2026-03-02T12:00:00Z&to=2026-05-31T12:00:00Z',
    'spans more than 90 days once widened to whole days',
    '2026-03-02T00:00:00.000Z to 2026-06-01T00:00:00.000Z',
  ],
];

/** Less than 90 days as asked that widens to exactly 90 days, 2,160 hours: the longest answer. */
export const WIDENED_TO_90_DAYS = {
  query: 'from=2026-03-03T00:30:00Z&to=2026-05-31T23:30:00Z',
  from: '2026-03-03T00:00:00.000Z',
  to: '2026-06-01T00:00:00.000Z',
};
