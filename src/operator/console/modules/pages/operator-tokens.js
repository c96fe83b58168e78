// @ts-check
/* global confirm */
// The operator tokens page: every token, and Revoke. Only the command-line tool makes one.

/**
 * @import { AdminOperatorToken, AdminOperatorTokens } from '../../../admin/admin-schemas.ts'
 * @import { Renderer } from '../core/dom.js'
 */

import { admin } from '../core/admin-client.js';
import { badge, el, loadingPanel, table } from '../core/dom.js';
import { relative, utc } from '../core/format.js';
import { postAction } from '../core/forms.js';
import { auditHref } from '../core/links.js';

/** @type {Renderer} */
export async function operatorTokensPage(main) {
  /** @type {Promise<AdminOperatorTokens>} */
  const tokens = admin('GET /admin/v1/operator-tokens');
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
    const post = () => admin('POST /admin/v1/operator-tokens/{id}/revoke', { params: { id: token.id } });
    const run = postAction(revoke, 'Revoking', post, `Revoked operator token ${tokenLabel(token)}.`, reload);
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
