import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES } from '../../src/errors.ts';
import { buildHttpApp } from '../../src/http/core.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY, consoleRoutes } from '../../src/operator/console/console-routes.ts';

/**
 * The console's routes by themselves, on the HTTP core without operator authentication (the
 * operator app's authentication is tested with them in console-auth.test.ts): what every page and
 * file is served as, with which headers.
 */
const PAGES = [
  '/console',
  '/console/accounts',
  '/console/accounts/some-shop',
  '/console/deprecated',
  '/console/operator-tokens',
  '/console/audit',
  '/console/login',
];

describe('the console routes', () => {
  let app: FastifyInstance;
  let url: string;

  before(async () => {
    app = await buildHttpApp({ requestTimeoutMs: 10_000, schemas: [], errorCodes: ERROR_CODES }, async (scope) => {
      await scope.register(consoleRoutes);
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  after(() => app.close());

  it('serve every page as HTML with the strict policy, nothing inline, and no caching', async () => {
    for (const page of PAGES) {
      const answer = await fetch(`${url}${page}`);
      assert.equal(answer.status, 200, page);
      assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
      assertSecurityHeaders(answer.headers);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      const html = await answer.text();
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${page}: no inline script`);
      assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, `${page}: no inline style or handler`);
      assert.doesNotMatch(html, /https?:\/\//, `${page}: nothing from elsewhere`);
    }
  });

  it('link only files they serve, each at the version the page names', async () => {
    for (const page of PAGES) {
      const html = await (await fetch(`${url}${page}`)).text();
      const links = [...html.matchAll(/(?:src|href)="(\/console\/[^"]*\/assets\/[^"]+|\/console\/assets\/[^"]+)"/g)];
      assert.ok(links.length >= 2, `${page} links its script and style`);
      for (const [, link = ''] of links) {
        const answer = await fetch(`${url}${link}`);
        assert.equal(answer.status, 200, link);
        // A module's version is its release, in its path (the next test); every other file's is its `v`.
        if (link.startsWith('/console/assets/modules/')) continue;
        const version = new URL(link, url).searchParams.get('v');
        // The tag of the bytes sent: the version, with the coding when compressed.
        assert.match(answer.headers.get('etag') ?? '', new RegExp(`^"${version}(-br|-gzip)?"$`), link);
      }
    }
  });

  it('load the console as one module importing the others, of one release, as in the source tree', async () => {
    const sources = new URL('../../src/operator/console/modules/', import.meta.url);
    const inTree = readdirSync(sources, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.js'));
    for (const page of PAGES.filter((path) => path !== '/console/login')) {
      const html = await (await fetch(`${url}${page}`)).text();
      const entries = [...html.matchAll(/<script type="module" src="([^"]+)"><\/script>/g)].map(([, src]) => src);
      assert.equal(entries.length, 1, `${page} runs one module`);
      const entry = new URL(entries[0] ?? '', url);
      const release = /^\/console\/assets\/modules\/([A-Za-z0-9_-]{27})\/console\.js$/.exec(entry.pathname)?.[1];
      assert.ok(release !== undefined, `${page} runs console.js of a release: ${entry.pathname}`);
      const base = new URL(`/console/assets/modules/${release}/`, url);
      // Every module the entry imports, and those they import, fetched as the browser resolves them.
      const reached = new Set<string>();
      const pending = [entry];
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        const path = next.pathname.slice(base.pathname.length);
        if (reached.has(path)) continue;
        reached.add(path);
        const answer = await fetch(next);
        assert.equal(answer.status, 200, next.pathname);
        assert.equal(answer.headers.get('content-type'), 'application/javascript; charset=utf-8');
        assert.equal(answer.headers.get('cache-control'), 'private, max-age=300');
        assertSecurityHeaders(answer.headers);
        assert.match(answer.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]{27}(-br|-gzip)?"$/);
        const text = await answer.text();
        assert.equal(text, readFileSync(new URL(path, sources), 'utf8'), path);
        for (const [, imported = ''] of text.matchAll(/^import [^;]*?'(\.{1,2}\/[^']+)';$/gm)) {
          const resolved = new URL(imported, next);
          assert.ok(resolved.pathname.startsWith(base.pathname), `${path} imports ${imported} within its release`);
          pending.push(resolved);
        }
      }
      assert.deepEqual([...reached].sort(), [...inTree].sort(), `${page}: every module, and nothing else`);
      // Preloaded, so that the browser fetches them at once rather than import by import.
      const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map(([, href]) => href);
      assert.deepEqual(
        preloaded.sort(),
        [...reached]
          .filter((path) => path !== 'console.js')
          .map((path) => `${base.pathname}${path}`)
          .sort(),
      );
    }
  });

  it('serve no module of another release', async () => {
    const html = await (await fetch(`${url}/console`)).text();
    const entry = /<script type="module" src="([^"]+)">/.exec(html)?.[1] ?? '';
    const other = entry.replace(/\/modules\/[^/]+\//, `/modules/${'A'.repeat(27)}/`);
    assert.notEqual(other, entry);
    assert.equal((await fetch(`${url}${other}`)).status, 404);
  });

  it('log in with a form that posts nothing in an address and keeps only the login files open', async () => {
    const html = await (await fetch(`${url}/console/login`)).text();
    assert.match(html, /<form id="login" method="post"/);
    assert.match(html, /<input id="token" name="token" type="password"/);
    assert.match(html, /src="\/console\/login\/assets\/login\.js\?v=/);
    assert.doesNotMatch(html, /\/console\/assets\//, 'the login page needs nothing that is behind the token');
  });

  it('serves uPlot from the installed package, byte for byte, with an ETag, caching and a 304', async () => {
    const require = createRequire(import.meta.url);
    const installed = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'));
    const answer = await fetch(`${url}/console/assets/uplot.js`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/javascript; charset=utf-8');
    assert.equal(answer.headers.get('cache-control'), 'private, max-age=300');
    assertSecurityHeaders(answer.headers);
    assert.ok(Buffer.from(await answer.arrayBuffer()).equals(installed));
    const etag = answer.headers.get('etag') ?? '';
    assert.match(etag, /^"[A-Za-z0-9_-]{27}(-br|-gzip)?"$/);

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await fetch(`${url}/console/assets/uplot.js`, { headers: { 'if-none-match': ifNoneMatch } });
      assert.equal(again.status, 304, ifNoneMatch);
      assert.equal(again.headers.get('etag'), etag);
      assert.equal(await again.text(), '');
    }
    const changed = await fetch(`${url}/console/assets/uplot.js`, { headers: { 'if-none-match': '"other"' } });
    assert.equal(changed.status, 200);
  });

  it('serves its own script and styles as they are in the source tree', async () => {
    const files = [
      ['/console/assets/console.css', 'console.css', 'text/css; charset=utf-8'],
      ['/console/login/assets/login.js', 'login.js', 'application/javascript; charset=utf-8'],
      ['/console/login/assets/console.css', 'console.css', 'text/css; charset=utf-8'],
    ] as const;
    for (const [path, file, type] of files) {
      const answer = await fetch(`${url}${path}`);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers.get('content-type'), type);
      const source = readFileSync(new URL(`../../src/operator/console/${file}`, import.meta.url), 'utf8');
      assert.equal(await answer.text(), source);
    }
  });

  it('never writes data into the page as markup', () => {
    const console = new URL('../../src/operator/console/', import.meta.url);
    const scripts = readdirSync(console, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.js'));
    assert.ok(scripts.includes('login.js') && scripts.includes('modules/console.js'), scripts.join(', '));
    for (const path of scripts) {
      const source = readFileSync(new URL(path, console), 'utf8');
      assert.doesNotMatch(source, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/, path);
    }
  });

  it('keep every script of the console under 400 lines', () => {
    const console = new URL('../../src/operator/console/', import.meta.url);
    for (const path of readdirSync(console, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('.js'),
    )) {
      const lines = readFileSync(new URL(path, console), 'utf8').split('\n').length - 1;
      assert.ok(lines <= 400, `${path}: ${lines} lines`);
    }
  });
});

function assertSecurityHeaders(headers: Headers): void {
  assert.equal(headers.get('content-security-policy'), CONSOLE_CONTENT_SECURITY_POLICY);
  assert.equal(headers.get('x-content-type-options'), 'nosniff');
  assert.equal(headers.get('referrer-policy'), 'no-referrer');
}
