/**
 * A page of the console: a fixed HTML shell (console-pages.ts) served at `url` (console-routes.ts),
 * which the console's modules fill from the admin API with the renderer of `page`.
 */
interface ConsolePageRow<Page extends string> {
  /** The id: the shell's `data-page`, and the key of the page's renderer in `PAGES` of modules/console.js. */
  readonly page: string;
  /** The route, in Fastify's syntax; a page with a navigation link of its own has no parameters. */
  readonly url: `/console${string}`;
  /** The document's title, before " — Pet store console". */
  readonly title: string;
  /** A navigation link of its own (to `url`), or the page whose link is current while it is shown. */
  readonly navigation: { readonly label: string } | { readonly under: Page };
}

/** The rows as written, each `under` checked to name a page of the table. */
function pageTable<const Rows extends readonly ConsolePageRow<Rows[number]['page']>[]>(rows: Rows): Rows {
  return rows;
}

/**
 * The console's pages, in the order of the navigation. Adding one is a row here and a module in
 * modules/pages/ whose renderer goes into `PAGES` of modules/console.js, which the type check holds to
 * this table. This module imports nothing: the browser scripts' type check (tsconfig.browser.json)
 * reads it too.
 */
export const CONSOLE_PAGES = pageTable([
  { page: 'overview', url: '/console', title: 'Overview', navigation: { label: 'Overview' } },
  { page: 'accounts', url: '/console/accounts', title: 'Accounts', navigation: { label: 'Accounts' } },
  { page: 'account', url: '/console/accounts/:name', title: 'Account', navigation: { under: 'accounts' } },
  {
    page: 'deprecated',
    url: '/console/deprecated',
    title: 'Deprecated callers',
    navigation: { label: 'Deprecated callers' },
  },
  {
    page: 'operator-tokens',
    url: '/console/operator-tokens',
    title: 'Operator tokens',
    navigation: { label: 'Operator tokens' },
  },
  { page: 'audit', url: '/console/audit', title: 'Audit trail', navigation: { label: 'Audit trail' } },
]);

export type ConsolePageEntry = (typeof CONSOLE_PAGES)[number];
export type ConsolePage = ConsolePageEntry['page'];
