// @ts-check
/* global document, window, location, navigator, confirm */
// The page of one account: its plan and use, its history, its keys (issued, revoked, bans lifted)
// and its deprecated calls.

/**
 * @import { AdminAccount, AdminAccountDetail, AdminAccountUsage } from '../../../admin/admin-schemas.ts'
 * @import { AdminCreatedKey, AdminKey, AdminNewKey } from '../../../admin/admin-schemas.ts'
 * @import { HistoryRange } from '../core/history-panel.js'
 */

import { admin } from '../core/admin-client.js';
import { badge, el, field, loadingPanel, notify, statList, table } from '../core/dom.js';
import { count, relative, times, utc } from '../core/format.js';
import { onSubmit, postAction } from '../core/forms.js';
import { historyPanel, historyRange } from '../core/history-panel.js';
import { limitStats, limitsInWords, planInputs } from '../core/plan-inputs.js';

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
export async function accountPage(main, view = { issued: el('div', { class: 'issued' }), range: historyRange('30d') }) {
  const name = accountNameFromPath();
  const reload = () => accountPage(main, view);
  document.title = `${name} — Pet store console`;
  const params = { name };
  /** @type {Promise<AdminAccountDetail>} */
  const account = admin('GET /admin/v1/accounts/{name}', { params });
  /** @type {Promise<AdminAccountUsage>} */
  const usage = admin('GET /admin/v1/accounts/{name}/usage', { params });
  main.replaceChildren(
    el('p', { class: 'note' }, el('a', { href: '/console/accounts' }, '← All accounts')),
    el('h1', {}, name),
    loadingPanel('Plan and use', Promise.all([account, usage]), (answers) => [
      accountSummary(answers),
      planForm(answers[0], reload),
      keyLimitForm(answers[0], reload),
    ]),
    historyPanel({
      load: (query) => admin('GET /admin/v1/accounts/{name}/usage/history', { params, query }),
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
    ...limitStats(account.limits),
    {
      label: 'Today',
      value: account.today.used === null ? '—' : `${count(account.today.used)} / ${count(account.today.limit)}`,
    },
    { label: 'Requests, 30 days', value: count(usage.last30Days.requests), name: 'requests' },
    { label: 'Refusals, 30 days', value: count(refusals), kind: refusals > 0 ? 'bad' : undefined, name: 'refusals' },
    { label: 'Key limit', value: count(account.keyLimit), name: 'key-limit' },
  ]);
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
    const changed = await admin('PUT /admin/v1/accounts/{name}/plan', {
      params: { name: account.name },
      body: plan.value(),
    });
    notify(
      `${changed.name} is on the ${changed.plan} plan: ${limitsInWords(changed.limits)}. ` +
        'Every instance applies it within a second.',
    );
    await reload();
  });
  return [el('h3', {}, 'Change plan'), form];
}

/**
 * The form that sets how many active keys the account may hold (as `petstore account set-key-limit`): its own keys
 * cannot create more through the public API's /v1/keys.
 * @param {AdminAccountDetail} account
 * @param {() => Promise<void>} reload
 */
function keyLimitForm(account, reload) {
  const input = el('input', {
    type: 'number',
    id: 'key-limit',
    name: 'keyLimit',
    min: '1',
    value: String(account.keyLimit),
  });
  const form = el('form', { id: 'key-limit-form', class: 'inline-form' }, field('Active keys, at most', input));
  form.append(el('button', { type: 'submit' }, 'Set key limit'));
  onSubmit(form, async () => {
    /** @type {AdminAccount} */
    const changed = await admin('PUT /admin/v1/accounts/{name}/key-limit', {
      params: { name: account.name },
      // A value that is not a whole number is sent as it is: the admin API's refusal names the field.
      body: { keyLimit: Number(input.value) },
    });
    notify(`${changed.name} may hold ${count(changed.keyLimit)} active keys.`);
    await reload();
  });
  return [el('h3', {}, 'Key limit'), form];
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
  'keys:manage': "list, create, roll and revoke the account's keys",
};

/**
 * Scopes left unchecked until the operator checks them: never implied (src/domain/scopes.ts), so a
 * key that manages keys is always a deliberate choice.
 * @type {readonly KeyScope[]}
 */
const UNCHECKED_SCOPES = ['keys:manage'];

/**
 * A checkbox per scope, all but `keys:manage` checked, as a key issued without a choice holds them.
 * @returns {{ node: HTMLFieldSetElement, value(): KeyScope[] }}
 */
function scopeInputs() {
  const scopes = /** @type {[KeyScope, string][]} */ (Object.entries(SCOPE_NAMES));
  const boxes = scopes.map(([scope]) =>
    el('input', {
      type: 'checkbox',
      name: 'scopes',
      value: scope,
      checked: !UNCHECKED_SCOPES.includes(scope),
      'data-scope': scope,
    }),
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
    // None checked is sent as it is: the admin API's refusal names the scopes to choose from.
    /** @type {AdminNewKey} */
    const body = { scopes: scopes.value(), ...(expiry.value === '' ? {} : { expiresIn: expiry.value }) };
    /** @type {AdminCreatedKey} */
    const created = await admin('POST /admin/v1/accounts/{name}/keys', { params: { name }, body });
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

/** @type {Readonly<Record<AdminKey['state'], string | undefined>>} */
const STATE_BADGES = { active: 'good', revoked: undefined, expired: 'warn', banned: 'bad' };

/**
 * Who created or revoked a key, as the CLI writes it: `cli:<OS user>`, `operator_token:<id>`, `key:<id>`;
 * `—` where it is not known (keys issued before it was recorded) or the key is not revoked.
 * @param {AdminKey['createdBy']} actor
 */
function keyActorText(actor) {
  if (actor === null) return '—';
  return `${actor.kind}:${actor.kind === 'cli' ? actor.user : actor.id}`;
}

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
 * @param {AdminAccountDetail} account
 * @param {() => Promise<void>} reload
 */
function keysTable(account, reload) {
  /**
   * @param {HTMLButtonElement} button
   * @param {string} label
   * @param {() => Promise<unknown>} post
   * @param {string} done
   */
  const act = (button, label, post, done) => postAction(button, label, post, done, reload);
  /** @param {AdminKey} key */
  const actions = (key) => {
    const cell = el('td', { class: 'actions' });
    if (key.state !== 'revoked') {
      const revoke = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke' }, 'Revoke');
      const post = () => admin('POST /admin/v1/keys/{id}/revoke', { params: { id: key.id } });
      const run = act(revoke, 'Revoking', post, `Revoked ${key.id}.`);
      revoke.addEventListener('click', () => {
        if (confirm(`Revoke ${key.id}? Its requests are refused from now on; this cannot be undone.`)) void run();
      });
      cell.append(revoke);
    }
    if (isBanned(key)) {
      const lift = el('button', { type: 'button', 'data-action': 'lift' }, 'Lift ban');
      const post = () => admin('POST /admin/v1/bans/{keyId}/lift', { params: { keyId: key.id } });
      const run = act(lift, 'Lifting the ban', post, `Lifted the ban on ${key.id}.`);
      lift.addEventListener('click', () => {
        if (confirm(`Lift the ban on ${key.id}? Its requests are served again at once, within its limits.`)) void run();
      });
      cell.append(lift);
    }
    return cell;
  };
  return table(
    ['Key', 'Scopes', 'State', 'Created', 'Created by', 'Revoked by', 'Last use', 'Expires', 'Banned until', ''],
    account.keys.map((key) =>
      el(
        'tr',
        { 'data-key': key.id, 'data-state': key.state },
        el('td', { class: 'mono' }, key.name === null ? key.id : [key.id, el('div', { class: 'note' }, key.name)]),
        el('td', { class: 'scopes', 'data-scopes': key.scopes.join(' ') }, scopeList(key.scopes)),
        el('td', {}, badge(key.state, STATE_BADGES[key.state])),
        el('td', {}, utc(key.createdAt)),
        el('td', { 'data-created-by': keyActorText(key.createdBy) }, keyActorText(key.createdBy)),
        el('td', { 'data-revoked-by': keyActorText(key.revokedBy) }, keyActorText(key.revokedBy)),
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
