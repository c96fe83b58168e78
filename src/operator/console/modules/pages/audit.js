// @ts-check
/* global location, URLSearchParams */
// The audit trail page: every change operators made, newest first, filtered by its address's query.

/**
 * @import { AdminAuditEntry, AdminAuditTrail } from '../../../admin/admin-schemas.ts'
 * @import { AdminRequest } from '../../admin-operations.ts'
 * @import { Renderer } from '../core/dom.js'
 */

import { admin } from '../core/admin-client.js';
import { el, loadingPanel, table } from '../core/dom.js';
import { utc } from '../core/format.js';
import { auditHref } from '../core/links.js';

/**
 * Each action as the page names it; the type check holds the list to the admin API's.
 * @type {Readonly<Record<AdminAuditEntry['action'], string>>}
 */
const AUDIT_ACTIONS = {
  'account.create': 'account created',
  'account.update': 'plan changed',
  'key.create': 'key created',
  'key.revoke': 'key revoked',
  'key.roll': 'key rolled',
  'ban.lift': 'ban lifted',
  'operator_token.create': 'operator token created',
  'operator_token.revoke': 'operator token revoked',
};

/**
 * Through what a change was made, as the page names it; the type check holds the list to the admin API's.
 * @type {Readonly<Record<AdminAuditEntry['via'], string>>}
 */
const AUDIT_VIAS = { console: 'console', api: 'admin API', cli: 'CLI', key: "holder's key" };

/** @typedef {keyof NonNullable<AdminRequest<'GET /admin/v1/audit'>['query']>} AuditParameter */

/**
 * The query parameters of the page that the admin API takes, passed on as they are (the admin API
 * says what is wrong with one); the type check holds them to the admin API's.
 * @type {readonly AuditParameter[]}
 */
const AUDIT_PARAMETERS = ['actor', 'target', 'action', 'via', 'from', 'to', 'limit', 'cursor'];

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
export async function auditPage(main) {
  const chosen = new URLSearchParams(location.search);
  /** @type {Partial<Record<AuditParameter, string>>} */
  const passed = {};
  for (const name of AUDIT_PARAMETERS) {
    const value = chosen.get(name);
    if (value !== null && value !== '') passed[name] = value;
  }
  /** @type {Promise<AdminAuditTrail>} */
  const trail = admin('GET /admin/v1/audit', { query: passed });
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
  if (actor.kind === 'key')
    return el('a', { href: auditHref({ actor: actor.id }), class: 'mono' }, `${actor.id} (key of ${actor.account})`);
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
