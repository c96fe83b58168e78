// @ts-check
// The overview page: every account's requests, refusals and bans, and what the instance depends on.

/**
 * @import { AdminBans, AdminHistory, AdminStatus, AdminTopAccounts } from '../../../admin/admin-schemas.ts'
 * @import { Renderer } from '../core/dom.js'
 */

import { admin } from '../core/admin-client.js';
import { badge, el, loadingPanel, statList, table } from '../core/dom.js';
import { count, DAY_MS, iso, relative } from '../core/format.js';
import { historyPanel, historyRange, rangeQuery } from '../core/history-panel.js';
import { accountLink } from '../core/links.js';

/** @typedef {AdminHistory['points'][number]['outcome']} Outcome */

/** @type {Renderer} */
export async function overviewPage(main) {
  const now = Date.now();
  const since = iso(now - 7 * DAY_MS);
  const week = historyRange('7d');
  /** @type {Promise<AdminHistory>} */
  const history = admin('GET /admin/v1/usage/history', { query: rangeQuery(week, now) });
  /** @type {Promise<AdminStatus>} */
  const status = admin('GET /admin/v1/status');
  /** @type {Promise<AdminTopAccounts>} */
  const top = admin('GET /admin/v1/usage/top', { query: { by: 'refusals', limit: 10, from: since } });
  /** @type {Promise<AdminBans>} */
  const bans = admin('GET /admin/v1/bans');
  main.replaceChildren(
    el('h1', {}, 'Overview'),
    historyPanel({
      load: (query) => admin('GET /admin/v1/usage/history', { query }),
      initial: week,
      fileStem: 'usage-all-accounts',
      first: history,
    }),
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
