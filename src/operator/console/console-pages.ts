import {
  CONSOLE_ENTRY_MODULE,
  consoleModulePath,
  type ConsoleAsset,
  type ConsoleAssets,
  type ConsoleModules,
} from './console-assets.ts';
import { CONSOLE_PAGES, type ConsolePageEntry } from './console-page-table.ts';

/** Every page and asset is served under a fixed path; nothing in a shell comes from a request. */
function link(path: string, file: ConsoleAsset): string {
  return `${path}?v=${file.version}`;
}

/**
 * A page's scripts: classic ones, run in order once the page is parsed (`defer`), then an ES module,
 * which is deferred as well, and the modules it imports, fetched at once rather than import by import.
 */
interface Scripts {
  readonly classic: readonly string[];
  readonly module?: { readonly entry: string; readonly preload: readonly string[] };
}

function head(title: string, styles: readonly string[], scripts: Scripts): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title} — Pet store console</title>`,
    // No favicon request to answer 404 (img-src allows data:).
    '<link rel="icon" href="data:,">',
    ...styles.map((href) => `<link rel="stylesheet" href="${href}">`),
    ...(scripts.module?.preload ?? []).map((href) => `<link rel="modulepreload" href="${href}">`),
    ...scripts.classic.map((src) => `<script src="${src}" defer></script>`),
    ...(scripts.module === undefined ? [] : [`<script type="module" src="${scripts.module.entry}"></script>`]),
    '</head>',
  ].join('\n');
}

/** The navigation's links, the one of the page shown (or of the page it is under) marked current. */
function navigationLinks(shown: ConsolePageEntry): string {
  const current = 'under' in shown.navigation ? shown.navigation.under : shown.page;
  return CONSOLE_PAGES.flatMap(({ page, url, navigation }) => {
    if (!('label' in navigation)) return [];
    const marked = page === current ? ' aria-current="page"' : '';
    return [`<a href="${url}"${marked}>${navigation.label}</a>`];
  }).join('\n');
}

/** The console's entry module, and every module besides it to preload: a page loads them all. */
function moduleScripts(modules: ConsoleModules): NonNullable<Scripts['module']> {
  const others = [...modules.files.keys()].filter((path) => path !== CONSOLE_ENTRY_MODULE);
  return {
    entry: consoleModulePath(modules, CONSOLE_ENTRY_MODULE),
    preload: others.map((path) => consoleModulePath(modules, path)),
  };
}

/** The shell of a page of CONSOLE_PAGES. */
export function consolePageHtml(shown: ConsolePageEntry, assets: ConsoleAssets): string {
  const files = assets.page;
  return [
    head(
      shown.title,
      [
        link('/console/assets/uplot.css', files['uplot.css']),
        link('/console/assets/console.css', files['console.css']),
      ],
      { classic: [link('/console/assets/uplot.js', files['uplot.js'])], module: moduleScripts(assets.modules) },
    ),
    `<body data-page="${shown.page}">`,
    '<header class="top">',
    '<span class="brand">Pet store console</span>',
    `<nav>\n${navigationLinks(shown)}\n</nav>`,
    '<button type="button" id="logout" class="quiet">Log out</button>',
    '</header>',
    '<p id="notice" role="status" hidden></p>',
    '<main id="main"><p class="loading">Loading…</p></main>',
    '<noscript><p>The console needs JavaScript.</p></noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export function loginPageHtml(assets: ConsoleAssets): string {
  const files = assets.login;
  return [
    head('Log in', [link('/console/login/assets/console.css', files['console.css'])], {
      classic: [link('/console/login/assets/login.js', files['login.js'])],
    }),
    '<body data-page="login">',
    '<main class="login">',
    '<h1>Pet store console</h1>',
    '<p>Log in with an operator token, made with <code>petstore operator token create</code>.</p>',
    // POST, so that the token never ends up in an address even if the script did not run.
    '<form id="login" method="post" autocomplete="off">',
    '<label for="token">Operator token</label>',
    '<input id="token" name="token" type="password" autocomplete="off" required spellcheck="false">',
    '<button type="submit">Log in</button>',
    '<p id="login-error" class="error" role="alert" hidden></p>',
    '</form>',
    '<noscript><p>The console needs JavaScript.</p></noscript>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
