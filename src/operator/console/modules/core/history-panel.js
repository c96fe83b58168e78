// @ts-check
/* global document, URL, Blob, setTimeout */
// A panel of a history chart: its ranges as buttons, and the range shown as a CSV download.

/**
 * @import { AdminHistory } from '../../../admin/admin-schemas.ts'
 */

import { LoggedOut, messageOf } from './admin-client.js';
import { outcomeChart } from './charts.js';
import { el } from './dom.js';
import { DAY_MS, HOUR_MS, iso } from './format.js';

/**
 * A range of a history chart: `buckets` hours or days, the current one and those before it.
 * @typedef {object} HistoryRange
 * @property {'24h' | '7d' | '30d' | '90d'} id
 * @property {string} label
 * @property {'hour' | 'day'} granularity
 * @property {number} buckets
 * @property {string} span
 */

/**
 * The ranges a history chart offers: the last 24 hours or 7 days by hour, the last 30 or 90 days by
 * day (at most 90 days, the admin API's bound).
 * @type {readonly HistoryRange[]}
 */
const HISTORY_RANGES = [
  { id: '24h', label: '24 h', granularity: 'hour', buckets: 24, span: 'per hour, last 24 hours' },
  { id: '7d', label: '7 d', granularity: 'hour', buckets: 7 * 24, span: 'per hour, last 7 days' },
  { id: '30d', label: '30 d', granularity: 'day', buckets: 30, span: 'per day, last 30 days' },
  { id: '90d', label: '90 d', granularity: 'day', buckets: 90, span: 'per day, last 90 days' },
];

/**
 * The history's query for a range, ending with the current hour or day (the admin API's default `to`).
 * @typedef {{ granularity: HistoryRange['granularity'], from: string }} HistoryQuery
 * @param {HistoryRange} range
 * @returns {HistoryQuery}
 */
export function rangeQuery(range, now = Date.now()) {
  const step = range.granularity === 'day' ? DAY_MS : HOUR_MS;
  const from = Math.floor(now / step) * step - (range.buckets - 1) * step;
  return { granularity: range.granularity, from: iso(from) };
}

/**
 * A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
 * @param {string | number} value
 */
function csvField(value) {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The history as CSV: a header, then a row per hour or day, operation and outcome that counted
 * requests, as the admin API answers them (ISO times, in UTC).
 * @param {AdminHistory} history
 */
function historyCsv(history) {
  const rows = [
    ['at', 'operation', 'outcome', 'count'],
    ...history.points.map((point) => [point.at, point.operation, point.outcome, point.count]),
  ];
  return rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/**
 * Downloads `text` as a file made in the page: a Blob behind an object URL, opened by a link with
 * `download` (a download, not a fetch: the page's policy leaves it alone).
 * @param {string} text
 * @param {string} fileName
 */
function downloadText(text, fileName) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = el('a', { href: url, download: fileName, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own copy once it began.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A panel with the chart of a history (`load`, an admin API history) and its ranges as buttons, and
 * a button that downloads the range shown as CSV, made from the answer already fetched.
 * @typedef {object} HistoryPanelOptions
 * @property {(query: HistoryQuery) => Promise<AdminHistory>} load asks the admin API for a range
 * @property {HistoryRange} initial
 * @property {string} fileStem the start of the CSV files' names
 * @property {Promise<AdminHistory>} [first] the initial range's answer, when it is already asked for
 * @property {(range: HistoryRange) => void} [chosen] told of the range chosen
 * @param {HistoryPanelOptions} options
 */
export function historyPanel({ load, initial, fileStem, first, chosen }) {
  const heading = el('h2', {});
  const body = el('div', {});
  const download = el(
    'button',
    { type: 'button', class: 'secondary', 'data-action': 'csv', disabled: true },
    'Download CSV',
  );
  const buttons = HISTORY_RANGES.map((range) => el('button', { type: 'button', 'data-range': range.id }, range.label));
  /** @type {AdminHistory | undefined} */
  let shown;
  let shownRange = initial;
  let latest = 0;
  /**
   * @param {HistoryRange} range
   * @param {Promise<AdminHistory>} answer
   */
  const show = (range, answer) => {
    const asked = ++latest;
    shown = undefined;
    download.disabled = true;
    heading.textContent = `Requests ${range.span}`;
    buttons.forEach((button, index) => button.setAttribute('aria-pressed', String(HISTORY_RANGES[index] === range)));
    body.replaceChildren(el('p', { class: 'loading' }, 'Loading…'));
    answer
      .then((history) => {
        if (asked !== latest) return;
        shown = history;
        shownRange = range;
        download.disabled = false;
        body.replaceChildren(...[outcomeChart(history)].flat(2).filter((node) => node !== null));
      })
      .catch((/** @type {unknown} */ error) => {
        if (asked === latest && !(error instanceof LoggedOut))
          body.replaceChildren(el('p', { class: 'error' }, messageOf(error)));
      });
  };
  /** @param {HistoryRange} range */
  const fetchRange = (range) => load(rangeQuery(range));
  buttons.forEach((button, index) => {
    const range = HISTORY_RANGES[index];
    button.addEventListener('click', () => {
      if (range === undefined) return;
      chosen?.(range);
      show(range, fetchRange(range));
    });
  });
  download.addEventListener('click', () => {
    if (shown === undefined) return;
    downloadText(historyCsv(shown), `${fileStem}-${shownRange.id}-${shown.from.slice(0, 10)}.csv`);
  });
  show(initial, first ?? fetchRange(initial));
  const tools = el(
    'div',
    { class: 'tools' },
    el('div', { class: 'ranges', role: 'group', 'aria-label': 'Range' }, buttons),
    download,
  );
  return el('section', { class: 'panel history' }, el('div', { class: 'panel-head' }, heading, tools), body);
}

/** @param {HistoryRange['id']} id */
export function historyRange(id) {
  const found = HISTORY_RANGES.find((range) => range.id === id);
  if (found === undefined) throw new Error(`no history range ${id}`);
  return found;
}
