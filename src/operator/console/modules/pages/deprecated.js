// @ts-check
// The deprecated callers page: who still calls getPet, and until when it works.

/**
 * @import { AdminDeprecatedCallers } from '../../../admin/admin-schemas.ts'
 * @import { Renderer } from '../core/dom.js'
 */

import { admin } from '../core/admin-client.js';
import { el, loadingPanel, table } from '../core/dom.js';
import { count, DAY_MS, relative, utc } from '../core/format.js';
import { accountLink } from '../core/links.js';

/** @type {Renderer} */
export async function deprecatedPage(main) {
  /** @type {Promise<AdminDeprecatedCallers>} */
  const callers = admin('GET /admin/v1/deprecated-callers');
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
