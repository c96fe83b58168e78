// @ts-check
/* global document, location, HTMLElement */
// The operator console in the browser: the module each page's shell (console-pages.ts) loads. It
// runs the renderer of the page named by the shell's `data-page`, one module per page under pages/,
// built with the shared core under core/. The modules are served as they are (console-assets.ts), and
// type-checked (tsconfig.browser.json): what they read of an answer is typed by the admin API's
// schemas (admin-operations.ts), and the renderers by the console's table of pages.

/**
 * @import { ConsolePage } from '../console-page-table.ts'
 * @import { Renderer } from './core/dom.js'
 */

import { admin, LoggedOut, messageOf } from './core/admin-client.js';
import { byId, el } from './core/dom.js';
import { accountPage } from './pages/account.js';
import { accountsPage } from './pages/accounts.js';
import { auditPage } from './pages/audit.js';
import { deprecatedPage } from './pages/deprecated.js';
import { operatorTokensPage } from './pages/operator-tokens.js';
import { overviewPage } from './pages/overview.js';

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
    await admin('DELETE /admin/v1/session');
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
