// @ts-check
/* global uPlot, window, queueMicrotask */
// The history charts: uPlot's (its self-contained build, loaded by the page before the console's
// modules, defines the global uPlot), in UTC, with a legend of the console's own.

/**
 * @import { AlignedData, Options } from 'uplot'
 * @import { AdminHistory } from '../../../admin/admin-schemas.ts'
 */

import { el } from './dom.js';
import { count, DAY_MS, HOUR_MS, iso, utc } from './format.js';

/** @typedef {AdminHistory['points'][number]['outcome']} Outcome */

/** @type {readonly Outcome[]} */
const OUTCOMES = ['2xx', '4xx', '429', 'banned', '5xx'];
/** @type {Readonly<Record<Outcome, string>>} */
const OUTCOME_COLORS = { '2xx': '#2e7d32', '4xx': '#e08e00', 429: '#8e24aa', banned: '#c62828', '5xx': '#37474f' };
const CHART_HEIGHT = 260;
const WHOLE_STEPS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].flatMap((scale) => [scale, 2 * scale, 5 * scale]);

/**
 * A history as uPlot data: one x per hour or day of the range (in seconds), one series per outcome
 * (in the order of OUTCOMES) summed over the operations, zeros where nothing was counted.
 * @param {AdminHistory} history
 */
function outcomeData(history) {
  const step = history.granularity === 'day' ? DAY_MS : HOUR_MS;
  const from = Date.parse(history.from);
  const to = Date.parse(history.to);
  /** @type {number[]} */
  const xs = [];
  for (let at = from; at < to; at += step) xs.push(at / 1000);
  const series = OUTCOMES.map(() => Array.from(xs, () => 0));
  for (const point of history.points) {
    const index = Math.round((Date.parse(point.at) - from) / step);
    const counts = series[OUTCOMES.indexOf(point.outcome)];
    if (counts !== undefined && index >= 0 && index < xs.length) counts[index] = (counts[index] ?? 0) + point.count;
  }
  return { xs, series };
}

/**
 * Ticks of the time axis in UTC, 24-hour: `06-01` for days, `14:00` for hours and the date at midnight.
 * @param {unknown} _plot
 * @param {number[]} ticks
 * @param {number} _axis
 * @param {number} _space
 * @param {number} increment
 */
function utcTicks(_plot, ticks, _axis, _space, increment) {
  return ticks.map((tick) => {
    const text = new Date(tick * 1000).toISOString();
    const date = text.slice(5, 10);
    const time = text.slice(11, 16);
    if (increment >= DAY_MS / 1000) return date;
    return time === '00:00' ? `${time}\n${date}` : time;
  });
}

/** @param {number} seconds */
function utcDate(seconds) {
  return uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
}

/**
 * A uPlot chart of requests by outcome, with the totals of the period under it. The container carries
 * them as data-total and data-total-<outcome>, for whoever reads the page without looking at it.
 * @param {AdminHistory} history
 */
export function outcomeChart(history) {
  const { xs, series } = outcomeData(history);
  /** @type {AlignedData} */
  const data = [xs, ...series];
  const totals = series.map((counts) => counts.reduce((sum, value) => sum + value, 0));
  const total = totals.reduce((sum, value) => sum + value, 0);
  const daily = history.granularity === 'day';
  const chart = el('div', { class: 'chart', 'data-total': total });
  OUTCOMES.forEach((outcome, index) => chart.setAttribute(`data-total-${outcome}`, String(totals[index])));
  const caption = el('li', { class: 'caption' }, 'Total');
  const values = OUTCOMES.map((_outcome, index) => el('strong', {}, count(totals[index])));
  const legend = el(
    'ul',
    { class: 'totals', 'aria-label': 'Requests by outcome: in the whole period, or in the hour or day pointed at' },
    caption,
    OUTCOMES.map((outcome, index) => {
      const swatch = el('span', { class: 'swatch' });
      // A style set through the DOM, not an inline style attribute: the page's policy allows it.
      swatch.style.backgroundColor = OUTCOME_COLORS[outcome];
      return el('li', { 'data-outcome': outcome }, swatch, `${outcome}: `, values[index]);
    }),
  );
  /**
   * The chart's one legend: the period's totals, or the counts of the hour or day under the pointer
   * (uPlot's own legend is off: beside this one it showed only dashes until pointed at).
   * @param {number | null | undefined} index
   */
  const showAt = (index) => {
    const pointed = typeof index === 'number' && index >= 0 && index < xs.length ? index : undefined;
    legend.toggleAttribute('data-at', pointed !== undefined);
    caption.textContent = pointed === undefined ? 'Total' : bucketLabel(xs[pointed] ?? 0, daily);
    const shown = pointed === undefined ? totals : series.map((counts) => counts[pointed] ?? 0);
    values.forEach((strong, outcome) => {
      strong.textContent = count(shown[outcome]);
    });
  };

  const note = total === 0 ? el('p', { class: 'empty' }, 'No requests in this period.') : null;
  /** @type {Options} */
  const options = {
    width: 800,
    height: CHART_HEIGHT,
    tzDate: utcDate,
    scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, Math.max(4, max * 1.1)] } },
    legend: { show: false },
    hooks: { setCursor: [(plot) => showAt(plot.cursor.idx)] },
    series: [
      { label: daily ? 'Day (UTC)' : 'Hour (UTC)' },
      ...OUTCOMES.map((outcome) => ({
        label: outcome,
        stroke: OUTCOME_COLORS[outcome],
        width: 2,
        points: { show: daily },
      })),
    ],
    // Whole requests only on the y axis.
    axes: [{ values: utcTicks }, { incrs: WHOLE_STEPS, values: (_plot, ticks) => ticks.map((tick) => count(tick)) }],
  };
  // Drawn once the container is in the page, at its width.
  queueMicrotask(() => {
    letGoOfDetached();
    plots.add({ container: chart, plot: new uPlot({ ...options, width: chartWidth(chart) }, data, chart) });
  });
  return [chart, legend, note];
}

/**
 * `2025-06-01 14:00 UTC` for an hour, `2025-06-01` for a day.
 * @param {number} seconds
 * @param {boolean} daily
 */
function bucketLabel(seconds, daily) {
  const text = utc(iso(seconds * 1000));
  return daily ? text.slice(0, 10) : text;
}

/** Destroys the charts a new rendering took out of the page. */
function letGoOfDetached() {
  for (const drawn of plots) {
    if (drawn.container.isConnected) continue;
    drawn.plot.destroy();
    plots.delete(drawn);
  }
}

/** @param {HTMLElement} container */
function chartWidth(container) {
  return Math.max(320, Math.floor(container.getBoundingClientRect().width) || 800);
}

/**
 * The charts drawn, resized with the window; those a new rendering of the page replaced are let go.
 * @type {Set<{ container: HTMLElement, plot: InstanceType<typeof uPlot> }>}
 */
const plots = new Set();

window.addEventListener('resize', () => {
  letGoOfDetached();
  for (const drawn of plots) drawn.plot.setSize({ width: chartWidth(drawn.container), height: CHART_HEIGHT });
});
