// @ts-check
/* global uPlot, document, window, fetch, location, confirm, queueMicrotask, HTMLElement */
/* global navigator, history, setTimeout, clearTimeout, URL, URLSearchParams, Blob */
// The operator console in the browser (served as is by src/operator/console/console-routes.ts). The
// pages allow no inline script or style: everything is built here from the admin API's answers, and
// every text from them goes into the page as text (textContent, text nodes), never as markup.
// Type-checked (tsconfig.browser.json): what it reads of an answer is typed by the admin API's schemas,
// and its renderers by the console's table of pages.
'use strict';

/**
 * @import { AlignedData, Options } from 'uplot'
 * @import { AdminAccount, AdminAccountDetail, AdminAccountUsage, AdminAccounts } from '../admin/admin-schemas.ts'
 * @import { AdminBans, AdminDeprecatedCallers, AdminError, AdminHistory, AdminKey } from '../admin/admin-schemas.ts'
 * @import { AdminStatus, AdminTopAccounts } from '../admin/admin-schemas.ts'
 * @import { AdminCreatedKey, AdminNewAccount, AdminNewKey, AdminPlanChange } from '../admin/admin-schemas.ts'
 * @import { AdminAuditEntry, AdminAuditTrail } from '../admin/admin-schemas.ts'
 * @import { AdminOperatorToken, AdminOperatorTokens } from '../admin/admin-schemas.ts'
 * @import { ConsolePage } from './console-page-table.ts'
 * @import { WindowField } from '../../domain/limit-windows.ts'
 */

/** @typedef {AdminHistory['points'][number]['outcome']} Outcome */

/** @type {readonly Outcome[]} */
const OUTCOMES = ['2xx', '4xx', '429', 'banned', '5xx'];
/** @type {Readonly<Record<Outcome, string>>} */
const OUTCOME_COLORS = { '2xx': '#2e7d32', '4xx': '#e08e00', 429: '#8e24aa', banned: '#c62828', '5xx': '#37474f' };
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const CHART_HEIGHT = 260;
const WHOLE_STEPS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].flatMap((scale) => [scale, 2 * scale, 5 * scale]);

/** The admin API said 401: the session ended (logout, idle, its time, its token revoked); the login page is next. */
class LoggedOut extends Error {}

/**
 * Calls the admin API with the console's cookie; the JSON answer, or an Error with the API's message.
 * The answer is the `T` that the admin API's schema for `path` gives, which the caller names.
 * @template T
 * @param {string} path
 * @param {Omit<RequestInit, 'headers'> & { headers?: Readonly<Record<string, string>> }} [init]
 * @returns {Promise<T>}
 */
async function api(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    credentials: 'same-origin',
    // The page's own policy (no-referrer) would send `Origin: null` with a POST, which the admin API
    // refuses from a cookie; this one sends the console's origin, to this origin only.
    referrerPolicy: 'same-origin',
    headers: { accept: 'application/json', ...init.headers },
  });
  if (response.status === 401) {
    // Back to this page once logged in again.
    location.assign(`/console/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new LoggedOut('not logged in');
  }
  const text = await response.text();
  /** @type {unknown} */
  let body = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  if (!response.ok) {
    const error = /** @type {Partial<AdminError> | null} */ (body);
    throw new Error(error?.message ?? `the admin API answered ${response.status}`);
  }
  return /** @type {T} */ (body);
}

/** @param {unknown} error */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The page's element of that id and type: the shells (console-pages.ts) always have it.
 * @template {HTMLElement} E
 * @param {string} id
 * @param {new () => E} type
 * @returns {E}
 */
function byId(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no #${id}`);
  return found;
}

/** @typedef {Node | string | number | false | null | undefined} Child */

/**
 * An element with attributes and children. Children are nodes or text (strings and numbers become
 * text nodes); attribute values are set as text. Nothing is parsed as HTML.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Readonly<Record<string, string | number | boolean | null | undefined>>} [attributes]
 * @param {...(Child | readonly Child[])} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'object' ? child : String(child));
  }
  return node;
}

/** @param {string} name */
function accountHref(name) {
  return `/console/accounts/${encodeURIComponent(name)}`;
}

/** @param {string} name */
function accountLink(name) {
  return el('a', { href: accountHref(name) }, name);
}

const numberFormat = new Intl.NumberFormat('en');

/** @param {number | null | undefined} value */
function count(value) {
  return value === null || value === undefined ? '—' : numberFormat.format(value);
}

/** @param {number} value */
function times(value) {
  return value === 1 ? 'once' : `${count(value)} times`;
}

/**
 * An ISO time as `2025-06-01 14:05 UTC`: one zone for every operator, the zone of the admin API.
 * @param {string | null} iso
 */
function utc(iso) {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * `3 min ago`, `in 2 h`; the exact time is the element's title.
 * @param {string | null} iso
 */
function relative(iso, now = Date.now()) {
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

/**
 * @param {string} text
 * @param {string} [kind]
 */
function badge(text, kind) {
  return el('span', { class: kind ? `badge ${kind}` : 'badge' }, text);
}

/**
 * @param {readonly (string | { text: string, class: string })[]} headings
 * @param {readonly Node[]} rows
 * @param {string} emptyText
 */
function table(headings, rows, emptyText) {
  if (rows.length === 0) return el('p', { class: 'empty' }, emptyText);
  const head = el(
    'tr',
    {},
    headings.map((heading) =>
      typeof heading === 'string' ? el('th', {}, heading) : el('th', { class: heading.class }, heading.text),
    ),
  );
  return el('table', {}, el('thead', {}, head), el('tbody', {}, rows));
}

/** @param {readonly { label: string, value: string, kind?: string | undefined, name?: string }[]} items */
function statList(items) {
  return el(
    'dl',
    { class: 'stats' },
    items.map(({ label, value, kind, name }) =>
      el('div', { class: 'stat' }, el('dt', {}, label), el('dd', { class: kind, 'data-stat': name }, value)),
    ),
  );
}

/**
 * @param {string} title
 * @param {...(Child | readonly Child[])} children
 */
function panel(title, ...children) {
  return el('section', { class: 'panel' }, el('h2', {}, title), ...children);
}

/**
 * What a panel draws from its answer: nodes, or arrays of them two deep, nulls left out.
 * @typedef {Node | null | readonly (Node | null | readonly (Node | null)[])[]} Drawn
 */

/**
 * A panel whose content comes from a promise, drawn by `render`; an error, the API's or the
 * drawing's, is shown in place of the content.
 * @template T
 * @param {string} title
 * @param {Promise<T>} promise
 * @param {(value: T) => Drawn} render
 */
function loadingPanel(title, promise, render) {
  const body = el('div', {}, el('p', { class: 'loading' }, 'Loading…'));
  promise
    .then((value) => body.replaceChildren(...[render(value)].flat(2).filter((node) => node !== null)))
    .catch((/** @type {unknown} */ error) => {
      if (!(error instanceof LoggedOut)) body.replaceChildren(el('p', { class: 'error' }, messageOf(error)));
    });
  return panel(title, body);
}

/**
 * @param {string} text
 * @param {boolean} [isError]
 */
function notify(text, isError = false) {
  const notice = byId('notice', HTMLElement);
  notice.textContent = text;
  notice.classList.toggle('error', isError);
  notice.hidden = false;
}

/** @param {number} ms */
function iso(ms) {
  return new Date(ms).toISOString();
}

// ——— Charts ———

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
function outcomeChart(history) {
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

// ——— History ranges and CSV ———

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
 * @param {HistoryRange} range
 */
function rangeQuery(range, now = Date.now()) {
  const step = range.granularity === 'day' ? DAY_MS : HOUR_MS;
  const from = Math.floor(now / step) * step - (range.buckets - 1) * step;
  return `granularity=${range.granularity}&from=${encodeURIComponent(iso(from))}`;
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
 * A panel with the chart of a history (`path`, an admin API history) and its ranges as buttons, and
 * a button that downloads the range shown as CSV, made from the answer already fetched.
 * @typedef {object} HistoryPanelOptions
 * @property {string} path
 * @property {HistoryRange} initial
 * @property {string} fileStem the start of the CSV files' names
 * @property {Promise<AdminHistory>} [first] the initial range's answer, when it is already asked for
 * @property {(range: HistoryRange) => void} [chosen] told of the range chosen
 * @param {HistoryPanelOptions} options
 */
function historyPanel({ path, initial, fileStem, first, chosen }) {
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
  const fetchRange = (range) => /** @type {Promise<AdminHistory>} */ (api(`${path}?${rangeQuery(range)}`));
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
function historyRange(id) {
  const found = HISTORY_RANGES.find((range) => range.id === id);
  if (found === undefined) throw new Error(`no history range ${id}`);
  return found;
}

// ——— Forms: accounts, plans, keys ———

/**
 * Sends `body` as JSON; the admin API's answer, typed by the caller as with api().
 * @template T
 * @param {string} path
 * @param {'POST' | 'PUT'} method
 * @param {AdminNewAccount | AdminPlanChange | AdminNewKey} body
 * @returns {Promise<T>}
 */
function sendJson(path, method, body) {
  return api(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Runs `action` when the form is submitted (the browser having checked its fields), its buttons
 * disabled meanwhile; what went wrong is shown in the form.
 * @param {HTMLFormElement} form
 * @param {() => Promise<void>} action
 */
function onSubmit(form, action) {
  const problem = el('p', { class: 'error', role: 'alert', hidden: true });
  form.append(problem);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const buttons = [...form.querySelectorAll('button')];
    problem.hidden = true;
    buttons.forEach((button) => (button.disabled = true));
    action()
      .catch((/** @type {unknown} */ error) => {
        if (error instanceof LoggedOut) return;
        problem.textContent = messageOf(error);
        problem.hidden = false;
      })
      .finally(() => buttons.forEach((button) => (button.disabled = false)));
  });
}

/**
 * A labelled field.
 * @param {string} label
 * @param {HTMLElement} input
 */
function field(label, input) {
  return el('label', { class: 'field' }, el('span', {}, label), input);
}

/** @type {Readonly<Record<AdminAccount['plan'], string>>} */
const PLAN_NAMES = { free: 'free', pro: 'pro', business: 'business', enterprise: 'enterprise (its own limits)' };

/**
 * The label of each limit window's input, by its field: `tsc` refuses this table until it names
 * every window of LIMIT_WINDOWS (src/domain/limit-windows.ts), and the inputs follow from it.
 * @type {Readonly<Record<WindowField, string>>}
 */
const LIMIT_LABELS = { perMinute: 'Per minute', perDay: 'Per day' };

/**
 * A plan's choice and, for enterprise only, its limits (one per window), as the admin API takes them.
 * @param {string} id the prefix of the inputs' ids
 * @param {AdminAccount | AdminAccountDetail} [current]
 */
function planInputs(id, current) {
  const plans = /** @type {[AdminAccount['plan'], string][]} */ (Object.entries(PLAN_NAMES));
  const select = el(
    'select',
    { id: `${id}-plan`, name: 'plan' },
    plans.map(([plan, label]) => el('option', { value: plan, selected: current?.plan === plan }, label)),
  );
  const own = current?.plan === 'enterprise' ? current.limits : undefined;
  const inputs = /** @type {[WindowField, string][]} */ (Object.entries(LIMIT_LABELS)).map(([name, label]) => {
    const attributes = { id: `${id}-${name}`, name, type: 'number', min: 1, step: 1, required: true };
    return { name, label, input: el('input', { ...attributes, value: own?.[name], class: 'number' }) };
  });
  const limits = el('span', { class: 'limits' }, ...inputs.map(({ label, input }) => field(label, input)));
  const sync = () => {
    const enterprise = select.value === 'enterprise';
    limits.hidden = !enterprise;
    for (const { input } of inputs) input.disabled = !enterprise;
  };
  select.addEventListener('change', sync);
  sync();
  return {
    nodes: [field('Plan', select), limits],
    /** @returns {AdminPlanChange} */
    value() {
      const plan = /** @type {AdminAccount['plan']} */ (select.value);
      if (plan !== 'enterprise') return { plan };
      return { plan, ...Object.fromEntries(inputs.map(({ name, input }) => [name, input.valueAsNumber])) };
    },
  };
}

/** The form that creates an account (as `petstore account create`), then opens its page. */
function newAccountPanel() {
  const name = el('input', { id: 'new-account-name', name: 'name', required: true, maxlength: 64 });
  name.autocomplete = 'off';
  name.spellcheck = false;
  const plan = planInputs('new-account');
  const form = el(
    'form',
    { id: 'new-account', class: 'inline-form' },
    field('Name', name),
    plan.nodes,
    el('button', { type: 'submit' }, 'Create account'),
  );
  onSubmit(form, async () => {
    /** @type {AdminNewAccount} */
    const body = { name: name.value.trim(), ...plan.value() };
    if (!confirm(`Create the account ${body.name} on the ${body.plan} plan? An account cannot be deleted.`)) return;
    await sendJson('/admin/v1/accounts', 'POST', body);
    location.assign(accountHref(body.name));
  });
  return panel(
    'New account',
    el('p', { class: 'note' }, 'Letters, digits, dots, dashes and underscores. Issue its keys on its page.'),
    form,
  );
}

/**
 * Accounts a page at a time, oldest first, searched by name: the search is kept in the page's address.
 * @param {string} initialQuery
 * @param {number} limit
 */
function accountListPanel(initialQuery, limit) {
  const search = el('input', { id: 'account-search', name: 'q', type: 'search', value: initialQuery, maxlength: 64 });
  search.placeholder = 'Part of a name, in any case';
  search.autocomplete = 'off';
  search.spellcheck = false;
  const form = el('form', { class: 'inline-form', role: 'search' }, field('Name contains', search));
  form.append(el('button', { type: 'submit' }, 'Search'));
  const results = el('div', {}, el('p', { class: 'loading' }, 'Loading…'));
  const previous = el('button', { type: 'button', class: 'secondary', 'data-action': 'previous' }, '← Previous');
  const next = el('button', { type: 'button', class: 'secondary', 'data-action': 'next' }, 'Next →');
  const where = el('span', { class: 'note' });
  const pager = el('div', { class: 'pager', hidden: true }, previous, where, next);
  /** The cursors of the pages up to the one shown (the first page has none). @type {(string | undefined)[]} */
  let trail = [undefined];
  /** @type {string | null} */
  let following = null;
  let query = initialQuery;
  let latest = 0;
  const show = async () => {
    const asked = ++latest;
    previous.disabled = true;
    next.disabled = true;
    const cursor = trail.at(-1);
    const params = new URLSearchParams({ limit: String(limit) });
    if (query !== '') params.set('q', query);
    if (cursor !== undefined) params.set('cursor', cursor);
    try {
      /** @type {AdminAccounts} */
      const answer = await api(`/admin/v1/accounts?${params}`);
      if (asked !== latest) return;
      following = answer.nextCursor;
      results.replaceChildren(accountsTable(answer, query));
      // What the rows shown answer, for whoever reads the page without looking at it.
      results.dataset.query = query;
      results.dataset.page = String(trail.length);
      where.textContent = `Page ${trail.length}`;
      pager.hidden = trail.length === 1 && following === null;
      previous.disabled = trail.length <= 1;
      next.disabled = following === null;
    } catch (error) {
      if (asked === latest && !(error instanceof LoggedOut))
        results.replaceChildren(el('p', { class: 'error' }, messageOf(error)));
    }
  };
  /** @param {string} text */
  const searchFor = (text) => {
    query = text;
    trail = [undefined];
    const address = new URL(location.href);
    if (text === '') address.searchParams.delete('q');
    else address.searchParams.set('q', text);
    history.replaceState(null, '', address);
    void show();
  };
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => searchFor(search.value.trim()), 300);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    searchFor(search.value.trim());
  });
  next.addEventListener('click', () => {
    if (following === null) return;
    trail.push(following);
    void show();
  });
  previous.addEventListener('click', () => {
    if (trail.length <= 1) return;
    trail.pop();
    void show();
  });
  void show();
  return panel('All accounts', form, results, pager);
}

/**
 * The form that changes the account's plan and limits (as `petstore account set-plan`).
 * @param {AdminAccountDetail} account
 * @param {() => Promise<void>} reload
 */
function planForm(account, reload) {
  const plan = planInputs('plan-change', account);
  const form = el('form', { id: 'plan-form', class: 'inline-form' }, plan.nodes);
  form.append(el('button', { type: 'submit' }, 'Change plan'));
  onSubmit(form, async () => {
    /** @type {AdminAccount} */
    const changed = await sendJson(`/admin/v1/accounts/${encodeURIComponent(account.name)}/plan`, 'PUT', plan.value());
    const { perMinute, perDay } = changed.limits;
    notify(
      `${changed.name} is on the ${changed.plan} plan: ${count(perMinute)} requests a minute, ${count(perDay)} a ` +
        'day. Every instance applies it within a second.',
    );
    await reload();
  });
  return [el('h3', {}, 'Change plan'), form];
}

/** @type {readonly (readonly [AdminNewKey['expiresIn'], string])[]} */
const KEY_LIFETIMES = [
  [undefined, 'never'],
  ['7d', 'in 7 days'],
  ['30d', 'in 30 days'],
  ['90d', 'in 90 days'],
  ['365d', 'in a year'],
];

/** @typedef {AdminKey['scopes'][number]} KeyScope */

/**
 * What each scope allows, in the order the admin API lists them; the type check holds the table
 * to the admin API's scopes, every one of them.
 * @type {Readonly<Record<KeyScope, string>>}
 */
const SCOPE_NAMES = {
  'pets:read': 'list and get pets',
  'pets:write': 'create pets',
  'usage:read': 'read its usage',
};

/**
 * A checkbox per scope, all checked: a key issued without a choice has every scope.
 * @returns {{ node: HTMLFieldSetElement, value(): KeyScope[] }}
 */
function scopeInputs() {
  const scopes = /** @type {[KeyScope, string][]} */ (Object.entries(SCOPE_NAMES));
  const boxes = scopes.map(([scope]) =>
    el('input', { type: 'checkbox', name: 'scopes', value: scope, checked: true, 'data-scope': scope }),
  );
  const node = el(
    'fieldset',
    { id: 'new-key-scopes', class: 'scopes' },
    el('legend', {}, 'Scopes'),
    scopes.map(([scope, allows], at) =>
      el('label', {}, boxes[at], el('code', {}, scope), el('span', { class: 'note' }, allows)),
    ),
  );
  return {
    node,
    value: () => boxes.flatMap((box) => (box.checked ? [/** @type {KeyScope} */ (box.value)] : [])),
  };
}

/**
 * The form that issues a key (as `petstore key create`); the key goes into `issued`, once.
 * @param {string} name
 * @param {HTMLElement} issued
 * @param {() => Promise<void>} reload
 */
function issueKeyForm(name, issued, reload) {
  const expiry = el(
    'select',
    { id: 'new-key-expiry', name: 'expiresIn' },
    KEY_LIFETIMES.map(([value, label]) => el('option', { value: value ?? '' }, label)),
  );
  const scopes = scopeInputs();
  const form = el('form', { id: 'issue-key', class: 'inline-form' }, field('Expires', expiry), scopes.node);
  form.append(el('button', { type: 'submit' }, 'Issue a key'));
  onSubmit(form, async () => {
    const path = `/admin/v1/accounts/${encodeURIComponent(name)}/keys`;
    // None checked is sent as it is: the admin API's refusal names the scopes to choose from.
    /** @type {AdminNewKey} */
    const body = { scopes: scopes.value(), ...(expiry.value === '' ? {} : { expiresIn: expiry.value }) };
    /** @type {AdminCreatedKey} */
    const created = await sendJson(path, 'POST', body);
    issued.replaceChildren(newKeyBox(created, () => issued.replaceChildren()));
    notify(`Issued ${created.id}.`);
    await reload();
  });
  return [
    form,
    el('p', { class: 'note' }, "A key's scopes never change: to change them, issue a new key and revoke the old one."),
  ];
}

/**
 * A key just issued, in a read-only field with Copy: the only time the console has it.
 * @param {AdminCreatedKey} created
 * @param {() => void} dismiss
 */
function newKeyBox(created, dismiss) {
  const key = el('input', { id: 'new-key', class: 'mono', type: 'text', readonly: true, value: created.key });
  key.setAttribute('aria-label', `The new key ${created.id}`);
  key.dataset.keyId = created.id;
  key.size = created.key.length;
  key.spellcheck = false;
  key.addEventListener('focus', () => key.select());
  const state = el('span', { class: 'note', role: 'status' });
  const copy = el('button', { type: 'button', 'data-action': 'copy' }, 'Copy');
  copy.addEventListener('click', () => void copyKey(key, state));
  const done = el('button', { type: 'button', class: 'secondary', 'data-action': 'dismiss' }, 'Done');
  done.addEventListener('click', dismiss);
  const expires = created.expiresAt === null ? 'never expires' : `expires ${utc(created.expiresAt)}`;
  const scopes = `scopes ${created.scopes.join(', ')}`;
  return el(
    'div',
    { class: 'new-key' },
    el(
      'p',
      {},
      el('strong', {}, `New key ${created.id}`),
      ` (${scopes}; ${expires}). Copy it now: it is shown this once.`,
    ),
    el('div', { class: 'copy-row' }, key, copy, done),
    state,
  );
}

/**
 * Copies the key with the Clipboard API; where the page may not (not a secure context, one served
 * over plain HTTP to another machine; or the browser refused), selects it for the operator to copy.
 * @param {HTMLInputElement} key
 * @param {HTMLElement} state
 */
async function copyKey(key, state) {
  try {
    if (!window.isSecureContext || navigator.clipboard === undefined) throw new Error('no clipboard here');
    await navigator.clipboard.writeText(key.value);
    state.textContent = 'Copied.';
  } catch {
    key.focus();
    key.select();
    state.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy it.';
  }
}

// ——— Pages ———

/** @typedef {(main: HTMLElement) => Promise<void>} Renderer */

/** @type {Renderer} */
async function overviewPage(main) {
  const now = Date.now();
  const since = iso(now - 7 * DAY_MS);
  const week = historyRange('7d');
  /** @type {Promise<AdminHistory>} */
  const history = api(`/admin/v1/usage/history?${rangeQuery(week, now)}`);
  /** @type {Promise<AdminStatus>} */
  const status = api('/admin/v1/status');
  /** @type {Promise<AdminTopAccounts>} */
  const top = api(`/admin/v1/usage/top?by=refusals&limit=10&from=${encodeURIComponent(since)}`);
  /** @type {Promise<AdminBans>} */
  const bans = api('/admin/v1/bans');
  main.replaceChildren(
    el('h1', {}, 'Overview'),
    historyPanel({ path: '/admin/v1/usage/history', initial: week, fileStem: 'usage-all-accounts', first: history }),
    el(
      'div',
      { class: 'grid' },
      loadingPanel('Refusals and bans, last 7 days', Promise.all([history, top, bans]), refusalsAndBans),
      loadingPanel('Storage and Redis', status, statusView),
    ),
  );
}

/** @param {[AdminHistory, AdminTopAccounts, AdminBans]} answers */
function refusalsAndBans([history, top, bans]) {
  /** @param {Outcome} outcome */
  const sum = (outcome) =>
    history.points.filter((point) => point.outcome === outcome).reduce((total, point) => total + point.count, 0);
  const refused = sum('429');
  const banned = sum('banned');
  const refusers = top.accounts.filter((account) => account.refusals > 0);
  return [
    statList([
      { label: 'Refused (429)', value: count(refused), kind: refused > 0 ? 'bad' : undefined, name: 'refused' },
      { label: 'Refused while banned', value: count(banned), kind: banned > 0 ? 'bad' : undefined, name: 'banned' },
      { label: 'Keys banned now', value: count(bans.bans.length), name: 'active-bans' },
    ]),
    el('h3', {}, 'Top accounts by refusals'),
    table(
      ['Account', { text: 'Refusals', class: 'number' }, { text: 'Requests', class: 'number' }],
      refusers.map((account) =>
        el(
          'tr',
          {},
          el('td', {}, accountLink(account.account)),
          el('td', { class: 'number' }, count(account.refusals)),
          el('td', { class: 'number' }, count(account.requests)),
        ),
      ),
      'No account was refused in the last 7 days.',
    ),
    el('h3', {}, 'Banned keys'),
    table(
      ['Key', 'Account', 'Since', 'Until'],
      bans.bans.map((ban) =>
        el(
          'tr',
          {},
          el('td', { class: 'mono' }, ban.keyId),
          el('td', {}, accountLink(ban.account)),
          el('td', {}, relative(ban.startedAt)),
          el('td', {}, relative(ban.until)),
        ),
      ),
      'No key is banned.',
    ),
  ];
}

/** @param {boolean} ready */
function readiness(ready) {
  return ready ? badge('ready', 'good') : badge('not ready', 'bad');
}

/** @param {AdminStatus} status */
function statusView(status) {
  const rows = [
    el('tr', {}, el('th', {}, 'Storage'), el('td', {}, `${status.storage.backend} `, readiness(status.storage.ready))),
    el(
      'tr',
      {},
      el('th', {}, 'Redis'),
      el(
        'td',
        {},
        status.redis === null
          ? [badge('not configured'), ' rate limits are counted per instance']
          : [readiness(status.redis.ready), status.redis.ready ? '' : ' limits are counted per instance meanwhile'],
      ),
    ),
    el('tr', {}, el('th', {}, 'Accounts'), el('td', { 'data-stat': 'accounts' }, count(status.accounts))),
    el('tr', {}, el('th', {}, 'Active bans'), el('td', {}, count(status.activeBans))),
    el('tr', {}, el('th', {}, 'Checked'), el('td', {}, relative(status.checkedAt))),
  ];
  // While storage does not answer, the counts are unknown: say why rather than show a bare dash.
  const why = status.countsUnavailable === null ? null : el('p', { class: 'error' }, status.countsUnavailable);
  return [el('table', { class: 'status' }, el('tbody', {}, rows)), why];
}

/** @type {Renderer} */
async function accountsPage(main) {
  const shown = new URLSearchParams(location.search);
  const limit = Number(shown.get('limit'));
  const pageSize = Number.isInteger(limit) && limit >= 1 && limit <= 200 ? limit : 50;
  main.replaceChildren(el('h1', {}, 'Accounts'), newAccountPanel(), accountListPanel(shown.get('q') ?? '', pageSize));
}

/** @param {AdminAccount['today']} today */
function todayMeter(today) {
  if (today.used === null) return el('span', { class: 'note' }, `unknown of ${count(today.limit)}`);
  const meter = el('meter', {
    min: 0,
    max: Math.max(today.limit, 1),
    value: Math.min(today.used, today.limit),
    low: today.limit * 0.8,
    high: today.limit * 0.95,
    optimum: 0,
  });
  return [meter, `${count(today.used)} / ${count(today.limit)}`];
}

/**
 * @param {AdminAccounts} answer
 * @param {string} [query] what the names were searched for
 */
function accountsTable(answer, query = '') {
  return table(
    ['Account', 'Plan', 'Limits', 'Today', 'Keys', 'Last use', 'Created'],
    answer.accounts.map((account) =>
      el(
        'tr',
        { 'data-account': account.name },
        el('td', {}, accountLink(account.name)),
        el('td', {}, account.plan),
        el('td', {}, `${count(account.limits.perMinute)}/min, ${count(account.limits.perDay)}/day`),
        el('td', {}, todayMeter(account.today)),
        el('td', {}, `${count(account.keys.active)} active of ${count(account.keys.total)}`),
        el('td', {}, relative(account.lastUsedAt)),
        el('td', {}, utc(account.createdAt)),
      ),
    ),
    query === '' ? 'No accounts yet: create one above.' : `No account's name contains “${query}”.`,
  );
}

function accountNameFromPath() {
  const segment = location.pathname.split('/')[3] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * What the account page keeps when an action renders it again: the key just issued, the chart's range.
 * @typedef {{ readonly issued: HTMLElement, range: HistoryRange }} AccountView
 */

/**
 * @param {HTMLElement} main
 * @param {AccountView} view
 */
async function accountPage(main, view = { issued: el('div', { class: 'issued' }), range: historyRange('30d') }) {
  const name = accountNameFromPath();
  const reload = () => accountPage(main, view);
  document.title = `${name} — Pet store console`;
  const path = `/admin/v1/accounts/${encodeURIComponent(name)}`;
  /** @type {Promise<AdminAccountDetail>} */
  const account = api(path);
  /** @type {Promise<AdminAccountUsage>} */
  const usage = api(`${path}/usage`);
  main.replaceChildren(
    el('p', { class: 'note' }, el('a', { href: '/console/accounts' }, '← All accounts')),
    el('h1', {}, name),
    loadingPanel('Plan and use', Promise.all([account, usage]), (answers) => [
      accountSummary(answers),
      planForm(answers[0], reload),
    ]),
    historyPanel({
      path: `${path}/usage/history`,
      initial: view.range,
      fileStem: `usage-${name}`,
      chosen: (range) => (view.range = range),
    }),
    loadingPanel('Keys', account, (found) => [
      issueKeyForm(name, view.issued, reload),
      view.issued,
      keysTable(found, reload),
    ]),
    loadingPanel('Deprecated calls, last 30 days', usage, deprecatedCalls),
  );
}

/** @param {[AdminAccountDetail, AdminAccountUsage]} answers */
function accountSummary([account, usage]) {
  const refusals = usage.last30Days.refusals;
  return statList([
    { label: 'Plan', value: account.plan, name: 'plan' },
    { label: 'Per minute', value: count(account.limits.perMinute) },
    { label: 'Per day', value: count(account.limits.perDay) },
    {
      label: 'Today',
      value: account.today.used === null ? '—' : `${count(account.today.used)} / ${count(account.today.limit)}`,
    },
    { label: 'Requests, 30 days', value: count(usage.last30Days.requests), name: 'requests' },
    { label: 'Refusals, 30 days', value: count(refusals), kind: refusals > 0 ? 'bad' : undefined, name: 'refusals' },
  ]);
}

/** @type {Readonly<Record<AdminKey['state'], string | undefined>>} */
const STATE_BADGES = { active: 'good', revoked: undefined, expired: 'warn', banned: 'bad' };

/**
 * A key's scopes, one per line, each with what it allows as its tooltip.
 * @param {readonly KeyScope[]} scopes
 */
function scopeList(scopes) {
  return scopes.map((scope) => el('code', { title: SCOPE_NAMES[scope] }, scope));
}

/** @param {AdminKey} key */
function isBanned(key) {
  return key.state === 'banned' || (key.bannedUntil !== null && Date.parse(key.bannedUntil) > Date.now());
}

/**
 * What a button that POSTs to the admin API does once confirmed: the button disabled meanwhile, the
 * outcome in the notice, the page drawn again on success.
 * @param {HTMLButtonElement} button
 * @param {string} label what is being done, for the notice of a failure
 * @param {string} path
 * @param {string} done the notice of a success
 * @param {() => Promise<void>} reload
 */
function postAction(button, label, path, done, reload) {
  return async () => {
    button.disabled = true;
    try {
      await api(path, { method: 'POST' });
      notify(done);
      await reload();
    } catch (error) {
      button.disabled = false;
      if (!(error instanceof LoggedOut)) notify(`${label} failed: ${messageOf(error)}`, true);
    }
  };
}

/**
 * @param {AdminAccountDetail} account
 * @param {() => Promise<void>} reload
 */
function keysTable(account, reload) {
  /**
   * @param {HTMLButtonElement} button
   * @param {string} label
   * @param {string} path
   * @param {string} done
   */
  const act = (button, label, path, done) => postAction(button, label, path, done, reload);
  /** @param {AdminKey} key */
  const actions = (key) => {
    const cell = el('td', { class: 'actions' });
    if (key.state !== 'revoked') {
      const revoke = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke' }, 'Revoke');
      const run = act(revoke, 'Revoking', `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`, `Revoked ${key.id}.`);
      revoke.addEventListener('click', () => {
        if (confirm(`Revoke ${key.id}? Its requests are refused from now on; this cannot be undone.`)) void run();
      });
      cell.append(revoke);
    }
    if (isBanned(key)) {
      const lift = el('button', { type: 'button', 'data-action': 'lift' }, 'Lift ban');
      const path = `/admin/v1/bans/${encodeURIComponent(key.id)}/lift`;
      const run = act(lift, 'Lifting the ban', path, `Lifted the ban on ${key.id}.`);
      lift.addEventListener('click', () => {
        if (confirm(`Lift the ban on ${key.id}? Its requests are served again at once, within its limits.`)) void run();
      });
      cell.append(lift);
    }
    return cell;
  };
  return table(
    ['Key', 'Scopes', 'State', 'Created', 'Last use', 'Expires', 'Banned until', ''],
    account.keys.map((key) =>
      el(
        'tr',
        { 'data-key': key.id, 'data-state': key.state },
        el('td', { class: 'mono' }, key.id),
        el('td', { class: 'scopes', 'data-scopes': key.scopes.join(' ') }, scopeList(key.scopes)),
        el('td', {}, badge(key.state, STATE_BADGES[key.state])),
        el('td', {}, utc(key.createdAt)),
        el('td', {}, relative(key.lastUsedAt)),
        el('td', {}, key.expiresAt === null ? 'never' : utc(key.expiresAt)),
        el('td', {}, isBanned(key) ? relative(key.bannedUntil) : '—'),
        actions(key),
      ),
    ),
    'This account has no keys.',
  );
}

/** @param {AdminAccountUsage} usage */
function deprecatedCalls(usage) {
  return usage.deprecated.map((deprecation) => [
    el(
      'p',
      {},
      el('code', {}, deprecation.operation),
      ` stops working on ${utc(deprecation.sunset).slice(0, 10)}. `,
      deprecation.calls === 0
        ? 'This account has not called it in the last 30 days.'
        : `This account called it ${times(deprecation.calls)} in the last 30 days, last `,
      deprecation.calls === 0 ? null : relative(deprecation.lastCall),
      deprecation.calls === 0 ? null : '.',
    ),
    table(
      ['Key', { text: 'Calls', class: 'number' }, 'Last call'],
      deprecation.keys.map((key) =>
        el(
          'tr',
          { 'data-key': key.id },
          el('td', { class: 'mono' }, key.id),
          el('td', { class: 'number' }, count(key.calls)),
          el('td', {}, relative(key.lastCall)),
        ),
      ),
      'No key of this account called it.',
    ),
  ]);
}

/** @type {Renderer} */
async function deprecatedPage(main) {
  /** @type {Promise<AdminDeprecatedCallers>} */
  const callers = api('/admin/v1/deprecated-callers');
  main.replaceChildren(
    el('h1', {}, 'Deprecated callers'),
    loadingPanel('Still calling getPet', callers, deprecatedCallers),
  );
}

/** @param {AdminDeprecatedCallers} answer */
function deprecatedCallers(answer) {
  const daysLeft = Math.ceil((Date.parse(answer.sunset) - Date.now()) / DAY_MS);
  return [
    el(
      'p',
      {},
      'These accounts and keys called ',
      el('code', {}, `${answer.operation} (GET /v1/pets/{petId})`),
      ` since ${utc(answer.since)}. It stops working on ${utc(answer.sunset).slice(0, 10)}`,
      daysLeft > 0 ? `, in ${count(daysLeft)} days: contact them before then.` : '.',
    ),
    table(
      ['Account', 'Key', { text: 'Calls', class: 'number' }, 'Last call'],
      answer.callers.map((caller) =>
        el(
          'tr',
          { 'data-account': caller.account, 'data-key': caller.keyId },
          el('td', {}, accountLink(caller.account)),
          el('td', { class: 'mono' }, caller.keyId),
          el('td', { class: 'number' }, count(caller.calls)),
          el('td', {}, relative(caller.lastCall)),
        ),
      ),
      'No one called it in the last 30 days.',
    ),
  ];
}

// ——— Operator tokens ———

/** @type {Renderer} */
async function operatorTokensPage(main) {
  /** @type {Promise<AdminOperatorTokens>} */
  const tokens = api('/admin/v1/operator-tokens');
  main.replaceChildren(
    el('h1', {}, 'Operator tokens'),
    el(
      'p',
      { class: 'note' },
      'The tokens that open the admin API and this console, revoked ones included, oldest first. Only the ',
      'command-line tool makes one (',
      el('code', {}, 'petstore operator token create'),
      '), so that whoever makes a token can reach the store.',
    ),
    loadingPanel('Tokens', tokens, (answer) => operatorTokensTable(answer, () => operatorTokensPage(main))),
  );
}

/**
 * @param {AdminOperatorTokens} answer
 * @param {() => Promise<void>} reload
 */
function operatorTokensTable(answer, reload) {
  /** @param {AdminOperatorToken} token */
  const actions = (token) => {
    const cell = el('td', { class: 'actions' });
    if (token.revokedAt !== null) return cell;
    const revoke = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke' }, 'Revoke');
    const path = `/admin/v1/operator-tokens/${encodeURIComponent(token.id)}/revoke`;
    const run = postAction(revoke, 'Revoking', path, `Revoked operator token ${tokenLabel(token)}.`, reload);
    revoke.addEventListener('click', () => {
      const question =
        `Revoke operator token ${tokenLabel(token)}? Every instance refuses it at once and the console sessions ` +
        'it logged in end, this one too if you logged in with it. This cannot be undone.';
      if (confirm(question)) void run();
    });
    cell.append(revoke);
    return cell;
  };
  return table(
    ['Token', 'Name', 'State', 'Created', 'Last use', 'Revoked', ''],
    answer.tokens.map((token) => {
      const state = token.revokedAt === null ? 'active' : 'revoked';
      return el(
        'tr',
        { 'data-token': token.id, 'data-state': state },
        el('td', {}, el('a', { href: auditHref({ actor: token.id }), class: 'mono', title: 'Its changes' }, token.id)),
        el('td', {}, token.name ?? '—'),
        el('td', {}, badge(state, state === 'active' ? 'good' : undefined)),
        el('td', {}, utc(token.createdAt)),
        el('td', {}, relative(token.lastUsedAt)),
        el('td', {}, token.revokedAt === null ? '—' : utc(token.revokedAt)),
        actions(token),
      );
    }),
    'No operator token exists.',
  );
}

/** @param {AdminOperatorToken} token */
function tokenLabel(token) {
  return token.name === null ? token.id : `${token.id} (${token.name})`;
}

// ——— The audit trail ———

/**
 * Each action as the page names it; the type check holds the list to the admin API's.
 * @type {Readonly<Record<AdminAuditEntry['action'], string>>}
 */
const AUDIT_ACTIONS = {
  'account.create': 'account created',
  'account.update': 'plan changed',
  'key.create': 'key created',
  'key.revoke': 'key revoked',
  'ban.lift': 'ban lifted',
  'operator_token.create': 'operator token created',
  'operator_token.revoke': 'operator token revoked',
};

/**
 * Through what a change was made, as the page names it; the type check holds the list to the admin API's.
 * @type {Readonly<Record<AdminAuditEntry['via'], string>>}
 */
const AUDIT_VIAS = { console: 'console', api: 'admin API', cli: 'CLI' };

/** The query parameters of the page that the admin API takes, passed on as they are. */
const AUDIT_PARAMETERS = ['actor', 'target', 'action', 'via', 'from', 'to', 'limit', 'cursor'];

/** @param {Readonly<Record<string, string>>} parameters */
function auditHref(parameters) {
  const query = new URLSearchParams(parameters).toString();
  return query === '' ? '/console/audit' : `/console/audit?${query}`;
}

/**
 * The page's own filters (its address's query) and a form to change them: a plain GET to this page.
 * @param {URLSearchParams} chosen
 */
function auditFilters(chosen) {
  /**
   * @param {string} name
   * @param {string} label
   * @param {string} hint
   */
  const field = (name, label, hint) =>
    el(
      'label',
      {},
      label,
      el('input', { name, value: chosen.get(name) ?? '', placeholder: hint, spellcheck: false, autocomplete: 'off' }),
    );
  const action = chosen.get('action') ?? '';
  const options = Object.entries(AUDIT_ACTIONS).map(([value, label]) =>
    el('option', { value, selected: value === action }, label),
  );
  const via = chosen.get('via') ?? '';
  const vias = Object.entries(AUDIT_VIAS).map(([value, label]) =>
    el('option', { value, selected: value === via }, label),
  );
  return el(
    'form',
    { id: 'audit-filters', class: 'filters', method: 'get', action: '/console/audit' },
    field('actor', 'Who', 'cli, cli:alice or a token id'),
    field('target', 'Target', 'account:acme, key:key_…'),
    el('label', {}, 'Action', el('select', { name: 'action' }, el('option', { value: '' }, 'any'), options)),
    el('label', {}, 'Through', el('select', { name: 'via' }, el('option', { value: '' }, 'any'), vias)),
    el('button', { type: 'submit' }, 'Filter'),
    el('a', { href: '/console/audit' }, 'Clear'),
  );
}

/** @type {Renderer} */
async function auditPage(main) {
  const chosen = new URLSearchParams(location.search);
  /** @type {Record<string, string>} */
  const passed = {};
  for (const name of AUDIT_PARAMETERS) {
    const value = chosen.get(name);
    if (value !== null && value !== '') passed[name] = value;
  }
  const query = new URLSearchParams(passed).toString();
  /** @type {Promise<AdminAuditTrail>} */
  const trail = api(query === '' ? '/admin/v1/audit' : `/admin/v1/audit?${query}`);
  // The next page keeps the filters; the cursor is the answer's.
  const filters = Object.fromEntries(Object.entries(passed).filter(([name]) => name !== 'cursor'));
  main.replaceChildren(
    el('h1', {}, 'Audit trail'),
    el(
      'p',
      { class: 'note' },
      'Every change made through the console, the admin API or the petstore command-line tool, newest first.',
    ),
    auditFilters(chosen),
    loadingPanel('Changes', trail, (answer) => auditTable(answer, filters)),
  );
}

/**
 * @param {AdminAuditTrail} answer
 * @param {Readonly<Record<string, string>>} filters the page's filters, which the next page keeps
 */
function auditTable(answer, filters) {
  const filtered = Object.keys(filters).some((name) => name !== 'limit');
  const rows = answer.entries.map((entry) =>
    el(
      'tr',
      {
        'data-entry': entry.id,
        'data-action': entry.action,
        'data-target': `${entry.target.type}:${entry.target.id}`,
        'data-actor': entry.actor.kind === 'cli' ? `cli:${entry.actor.user}` : entry.actor.id,
        'data-via': entry.via,
      },
      el('td', { class: 'when', title: entry.at }, utc(entry.at)),
      el('td', {}, auditActor(entry.actor)),
      el('td', {}, el('a', { href: auditHref({ via: entry.via }) }, AUDIT_VIAS[entry.via])),
      el('td', {}, AUDIT_ACTIONS[entry.action]),
      el('td', {}, auditTarget(entry.target)),
      el('td', { class: 'change' }, auditChange(entry.before, entry.after)),
    ),
  );
  const next =
    answer.nextCursor === null
      ? null
      : el(
          'p',
          { class: 'pages' },
          el('a', { href: auditHref({ ...filters, cursor: answer.nextCursor }), rel: 'next' }, 'Older changes →'),
        );
  return [
    table(
      ['When', 'Who', 'Through', 'Action', 'Target', 'Before → after'],
      rows,
      filtered ? 'No change matches these filters.' : 'No change has been recorded.',
    ),
    next,
  ];
}

/** @param {AdminAuditEntry['actor']} actor */
function auditActor(actor) {
  if (actor.kind === 'cli') return el('a', { href: auditHref({ actor: `cli:${actor.user}` }) }, `CLI: ${actor.user}`);
  const label = actor.name === null ? actor.id : `${actor.name} (${actor.id})`;
  return el('a', { href: auditHref({ actor: actor.id }), class: 'mono' }, label);
}

/** @param {AdminAuditEntry['target']} target */
function auditTarget(target) {
  const filter = el('a', { href: auditHref({ target: `${target.type}:${target.id}` }) }, target.id);
  const kind = { account: 'account', key: 'key', operator_token: 'operator token' }[target.type];
  return [`${kind} `, target.type === 'account' ? filter : el('span', { class: 'mono' }, filter)];
}

/**
 * The values as `field: before → after`, one line each; nested values by their path (limits.perDay).
 * @param {AdminAuditEntry['before']} before
 * @param {AdminAuditEntry['after']} after
 */
function auditChange(before, after) {
  const was = flatValues(before);
  const is = flatValues(after);
  const fields = [...new Set([...was.keys(), ...is.keys()])];
  return el(
    'ul',
    { class: 'values' },
    fields.map((field) => {
      const from = was.has(field) ? was.get(field) : undefined;
      const to = is.has(field) ? is.get(field) : undefined;
      const shown = before === null ? shownValue(to) : `${shownValue(from)} → ${shownValue(to)}`;
      return el(
        'li',
        { 'data-field': field, class: before !== null && from === to ? 'same' : false },
        `${field}: `,
        shown,
      );
    }),
  );
}

/**
 * @param {Readonly<Record<string, unknown>> | null} values
 * @param {string} [prefix]
 * @returns {Map<string, string>}
 */
function flatValues(values, prefix = '') {
  /** @type {Map<string, string>} */
  const flat = new Map();
  for (const [field, value] of Object.entries(values ?? {})) {
    const path = `${prefix}${field}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, text] of flatValues(/** @type {Record<string, unknown>} */ (value), `${path}.`))
        flat.set(inner, text);
    } else flat.set(path, valueText(value));
  }
  return flat;
}

/**
 * A field's value as text: a list of names (a key's scopes) as `pets:read, usage:read`, others as JSON.
 * @param {unknown} value
 */
function valueText(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(', ');
  return JSON.stringify(value);
}

const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** @param {string | undefined} value */
function shownValue(value) {
  if (value === undefined || value === 'null') return '—';
  return ISO_INSTANT.test(value) ? utc(value) : value;
}

/**
 * The renderer of every page of CONSOLE_PAGES (console-page-table.ts), by the shell's `data-page`.
 * @type {Readonly<Record<ConsolePage, Renderer>>}
 */
const PAGES = {
  overview: overviewPage,
  accounts: accountsPage,
  account: accountPage,
  deprecated: deprecatedPage,
  'operator-tokens': operatorTokensPage,
  audit: auditPage,
};

/**
 * @param {string | undefined} page
 * @returns {page is ConsolePage}
 */
function isPage(page) {
  return page !== undefined && Object.hasOwn(PAGES, page);
}

async function logOut() {
  try {
    await api('/admin/v1/session', { method: 'DELETE' });
  } finally {
    location.assign('/console/login');
  }
}

byId('logout', HTMLElement).addEventListener('click', () => void logOut().catch(() => undefined));
const main = byId('main', HTMLElement);
const page = document.body.dataset.page;
if (!isPage(page)) throw new Error(`the console has no page ${page}`);
PAGES[page](main).catch((/** @type {unknown} */ error) => {
  if (!(error instanceof LoggedOut)) main.replaceChildren(el('p', { class: 'error' }, messageOf(error)));
});
