// @ts-check
// Numbers and times as the console shows them: one zone for every operator, UTC, the admin API's.

import { el } from './dom.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

const numberFormat = new Intl.NumberFormat('en');

/** @param {number | null | undefined} value */
export function count(value) {
  return value === null || value === undefined ? '—' : numberFormat.format(value);
}

/** @param {number} value */
export function times(value) {
  return value === 1 ? 'once' : `${count(value)} times`;
}

/**
 * An ISO time as `2025-06-01 14:05 UTC`: one zone for every operator, the zone of the admin API.
 * @param {string | null} iso
 */
export function utc(iso) {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * `3 min ago`, `in 2 h`; the exact time is the element's title.
 * @param {string | null} iso
 */
export function relative(iso, now = Date.now()) {
  if (iso === null || iso === undefined) return el('span', { class: 'note' }, 'never');
  const ms = Date.parse(iso) - now;
  const past = ms < 0;
  const abs = Math.abs(ms);
  const [amount, unit] =
    abs < 60_000
      ? [Math.round(abs / 1000), 's']
      : abs < HOUR_MS
        ? [Math.round(abs / 60_000), 'min']
        : abs < 2 * DAY_MS
          ? [Math.round(abs / HOUR_MS), 'h']
          : [Math.round(abs / DAY_MS), 'days'];
  return el('time', { datetime: iso, title: utc(iso) }, past ? `${amount} ${unit} ago` : `in ${amount} ${unit}`);
}

/** @param {number} ms */
export function iso(ms) {
  return new Date(ms).toISOString();
}
