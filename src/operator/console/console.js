// @ts-check
/* global uPlot, document, window, fetch, location, confirm, queueMicrotask, HTMLElement, URLSearchParams */
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
 * @import { AdminAuditEntry, AdminAuditTrail } from '../admin/admin-schemas.ts'
 * @import { ConsolePage } from './console-page-table.ts'
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

/** The admin API said 401: the cookie is gone or its token was deleted; the login page is next. */
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
    location.assign('/console/login');
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
  const legend = el(
    'ul',
    { class: 'totals', 'aria-label': 'Requests in this period by outcome' },
    OUTCOMES.map((outcome, index) => {
      const swatch = el('span', { class: 'swatch' });
      // A style set through the DOM, not an inline style attribute: the page's policy allows it.
      swatch.style.backgroundColor = OUTCOME_COLORS[outcome];
      return el('li', { 'data-outcome': outcome }, swatch, `${outcome}: `, el('strong', {}, count(totals[index])));
    }),
  );
  const note = total === 0 ? el('p', { class: 'empty' }, 'No requests in this period.') : null;
  /** @type {Options} */
  const options = {
    width: 800,
    height: CHART_HEIGHT,
    tzDate: utcDate,
    scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, Math.max(4, max * 1.1)] } },
    series: [
      { label: daily ? 'Day (UTC)' : 'Hour (UTC)', value: daily ? '{YYYY}-{MM}-{DD}' : '{YYYY}-{MM}-{DD} {HH}:00' },
      ...OUTCOMES.map((outcome) => ({
        label: outcome,
        stroke: OUTCOME_COLORS[outcome],
        width: 2,
        points: { show: daily },
        value: (/** @type {unknown} */ _plot, /** @type {number | null} */ value) =>
          value === null || value === undefined ? '—' : count(value),
      })),
    ],
    // Whole requests only on the y axis.
    axes: [{ values: utcTicks }, { incrs: WHOLE_STEPS, values: (_plot, ticks) => ticks.map((tick) => count(tick)) }],
  };
  // Drawn once the container is in the page, at its width.
  queueMicrotask(() =>
    plots.add({ container: chart, plot: new uPlot({ ...options, width: chartWidth(chart) }, data, chart) }),
  );
  return [chart, legend, note];
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
  for (const drawn of plots) {
    if (drawn.container.isConnected) drawn.plot.setSize({ width: chartWidth(drawn.container), height: CHART_HEIGHT });
    else {
      drawn.plot.destroy();
      plots.delete(drawn);
    }
  }
});

// ——— Pages ———

/** @typedef {(main: HTMLElement) => Promise<void>} Renderer */

/** @type {Renderer} */
async function overviewPage(main) {
  const now = Date.now();
  const since = iso(now - 7 * DAY_MS);
  /** @type {Promise<AdminHistory>} */
  const history = api(`/admin/v1/usage/history?granularity=hour&from=${encodeURIComponent(since)}`);
  /** @type {Promise<AdminStatus>} */
  const status = api('/admin/v1/status');
  /** @type {Promise<AdminTopAccounts>} */
  const top = api(`/admin/v1/usage/top?by=refusals&limit=10&from=${encodeURIComponent(since)}`);
  /** @type {Promise<AdminBans>} */
  const bans = api('/admin/v1/bans');
  main.replaceChildren(
    el('h1', {}, 'Overview'),
    loadingPanel('Requests per hour, last 7 days', history, outcomeChart),
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
  ];
  return el('table', { class: 'status' }, el('tbody', {}, rows));
}

/** @type {Renderer} */
async function accountsPage(main) {
  /** @type {Promise<AdminAccounts>} */
  const accounts = api('/admin/v1/accounts');
  main.replaceChildren(el('h1', {}, 'Accounts'), loadingPanel('All accounts', accounts, accountsTable));
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

/** @param {AdminAccounts} answer */
function accountsTable(answer) {
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
    'No accounts yet: create one with petstore account create.',
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

/** @type {Renderer} */
async function accountPage(main) {
  const name = accountNameFromPath();
  document.title = `${name} — Pet store console`;
  const path = `/admin/v1/accounts/${encodeURIComponent(name)}`;
  const since = iso(Date.now() - 30 * DAY_MS);
  /** @type {Promise<AdminAccountDetail>} */
  const account = api(path);
  /** @type {Promise<AdminAccountUsage>} */
  const usage = api(`${path}/usage`);
  /** @type {Promise<AdminHistory>} */
  const history = api(`${path}/usage/history?granularity=day&from=${encodeURIComponent(since)}`);
  main.replaceChildren(
    el('p', { class: 'note' }, el('a', { href: '/console/accounts' }, '← All accounts')),
    el('h1', {}, name),
    loadingPanel('Plan and use', Promise.all([account, usage]), accountSummary),
    loadingPanel('Requests per day, last 30 days', history, outcomeChart),
    loadingPanel('Keys', account, (found) => keysTable(found, () => accountPage(main))),
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

/** @param {AdminKey} key */
function isBanned(key) {
  return key.state === 'banned' || (key.bannedUntil !== null && Date.parse(key.bannedUntil) > Date.now());
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
  const act = (button, label, path, done) => async () => {
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
      lift.addEventListener('click', act(lift, 'Lifting the ban', path, `Lifted the ban on ${key.id}.`));
      cell.append(lift);
    }
    return cell;
  };
  return table(
    ['Key', 'State', 'Created', 'Last use', 'Expires', 'Banned until', ''],
    account.keys.map((key) =>
      el(
        'tr',
        { 'data-key': key.id, 'data-state': key.state },
        el('td', { class: 'mono' }, key.id),
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

/** The query parameters of the page that the admin API takes, passed on as they are. */
const AUDIT_PARAMETERS = ['actor', 'target', 'action', 'from', 'to', 'limit', 'cursor'];

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
  return el(
    'form',
    { id: 'audit-filters', class: 'filters', method: 'get', action: '/console/audit' },
    field('actor', 'Who', 'cli, cli:alice or a token id'),
    field('target', 'Target', 'account:acme, key:key_…'),
    el('label', {}, 'Action', el('select', { name: 'action' }, el('option', { value: '' }, 'any'), options)),
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
      },
      el('td', { class: 'when', title: entry.at }, utc(entry.at)),
      el('td', {}, auditActor(entry.actor)),
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
      ['When', 'Who', 'Action', 'Target', 'Before → after'],
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
    } else flat.set(path, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return flat;
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
