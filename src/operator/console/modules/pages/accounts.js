// @ts-check
/* global location, history, setTimeout, clearTimeout, confirm, URL, URLSearchParams */
// The accounts page: a new account's form, and the accounts a page at a time, searched by name.

/**
 * @import { AdminAccount, AdminAccounts, AdminNewAccount } from '../../../admin/admin-schemas.ts'
 * @import { Renderer } from '../core/dom.js'
 */

import { admin, LoggedOut, messageOf } from '../core/admin-client.js';
import { el, field, panel, table } from '../core/dom.js';
import { count, relative, utc } from '../core/format.js';
import { onSubmit } from '../core/forms.js';
import { accountHref, accountLink } from '../core/links.js';
import { limitsInBrief, planInputs } from '../core/plan-inputs.js';

/** @type {Renderer} */
export async function accountsPage(main) {
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
        el('td', {}, limitsInBrief(account.limits)),
        el('td', {}, todayMeter(account.today)),
        el('td', {}, `${count(account.keys.active)} active of ${count(account.keys.total)}`),
        el('td', {}, relative(account.lastUsedAt)),
        el('td', {}, utc(account.createdAt)),
      ),
    ),
    query === '' ? 'No accounts yet: create one above.' : `No account's name contains “${query}”.`,
  );
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
    await admin('POST /admin/v1/accounts', { body });
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
    try {
      /** @type {AdminAccounts} */
      const answer = await admin('GET /admin/v1/accounts', {
        query: { limit, q: query === '' ? undefined : query, cursor },
      });
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
