import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consoleModulePath, loadConsoleAssets } from '../../src/operator/console/console-assets.ts';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../src/operator/console/console-routes.ts';
import { assertError, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { operatorAppForSuite } from './operator-app.ts';

/**
 * The console on the operator listener: its pages and files need the operator token (in the header)
 * or a session (in the cookie) and show nothing without one; only the login page and its files are
 * open. A browser opening a page without a session is sent to the login page instead.
 */
const MODULES = loadConsoleAssets().modules;
/** The console's entry module, where this release serves it. */
const ENTRY_MODULE = consoleModulePath(MODULES, 'console.js');
const GUARDED = [
  '/console',
  '/console/accounts',
  '/console/accounts/some-shop',
  '/console/deprecated',
  ENTRY_MODULE,
  consoleModulePath(MODULES, 'core/admin-client.js'),
  '/console/assets/uplot.js',
  '/console/assets/console.css',
];
const OPEN = ['/console/login', '/console/login/assets/login.js', '/console/login/assets/console.css'];

describe('the console behind the operator token', () => {
  // A high limit of failures: this suite sends wrong tokens and sessions on purpose.
  const app = operatorAppForSuite({ authFailuresPerMinute: 10_000 });

  it('answers 401 with the Error body alone to every page and file without a token', async () => {
    for (const path of GUARDED) {
      for (const given of [{}, { key: 'pso_0000000000000000_00000000000000000000000000000000' }]) {
        const answer = await request(app.operator, path, given);
        assertError(answer, 401, 'unauthorized');
        assertNothingShown(answer, path);
        // The console's policy holds on its refusals too.
        assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CONTENT_SECURITY_POLICY, path);
      }
    }
  });

  it('serves the login page and its files without a token', async () => {
    for (const path of OPEN) {
      const answer = await request(app.operator, path);
      assert.equal(answer.status, 200, `${path}: ${answer.text.slice(0, 200)}`);
      assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CONTENT_SECURITY_POLICY);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(answer.headers.get('referrer-policy'), 'no-referrer');
    }
    const login = await request(app.operator, '/console/login');
    assert.match(login.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(login.text, /<form id="login"/);
  });

  it('serves the pages and files with the token in the header, or a session in the cookie', async () => {
    const cookie = await app.logIn();
    for (const path of GUARDED) {
      for (const given of [{ key: app.token }, { headers: { cookie } }]) {
        const answer = await request(app.operator, path, given);
        assert.equal(answer.status, 200, `${path}: ${answer.text.slice(0, 200)}`);
        assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CONTENT_SECURITY_POLICY);
      }
    }
    const page = await request(app.operator, '/console', { key: app.token });
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /<body data-page="overview">/);
  });

  it('serves the files with their ETag and caching through the operator app, and 304 for a copy held', async () => {
    const first = await request(app.operator, '/console/assets/uplot.js', { key: app.token });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'private, max-age=300');
    const etag = first.headers.get('etag') ?? '';
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await request(app.operator, '/console/assets/uplot.js', {
      key: app.token,
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const page = await request(app.operator, '/console', { key: app.token });
    assert.equal(page.headers.get('cache-control'), 'no-store');
  });

  it('keeps its pages out of the admin API document', async () => {
    const document = (await request(app.operator, '/admin/v1/openapi.json', { key: app.token })).json<{
      paths: Record<string, unknown>;
    }>();
    assert.deepEqual(
      Object.keys(document.paths).filter((path) => path.startsWith('/console')),
      [],
    );
  });

  it('sends a browser opening a page without a session to the login page, with the page to come back to', async () => {
    const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const cases: ReadonlyArray<readonly [path: string, location: string]> = [
      ['/console', '/console/login'],
      ['/console/', '/console/login?next=%2Fconsole%2F'],
      ['/console/accounts', '/console/login?next=%2Fconsole%2Faccounts'],
      ['/console/accounts/some-shop?x=1', '/console/login?next=%2Fconsole%2Faccounts%2Fsome-shop%3Fx%3D1'],
      // A page that does not exist is no different: nothing shows whether it does.
      ['/console/no-such-page', '/console/login?next=%2Fconsole%2Fno-such-page'],
    ];
    for (const [path, location] of cases) {
      const cookies: Record<string, string>[] = [
        {},
        { cookie: `petstore_operator=${'A'.repeat(43)}` },
        { cookie: 'petstore_operator=x' },
      ];
      for (const given of cookies) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await request(app.operator, path, { method, headers: { ...given, accept: browser } });
          assert.equal(answer.status, 303, `${method} ${path}: ${answer.text}`);
          assert.equal(answer.headers.get('location'), location, path);
          assert.equal(answer.text, '', `${path}: nothing of the console`);
          assert.equal(answer.headers.get('cache-control'), 'no-store');
        }
      }
    }
  });

  it('answers 401 to what is not a browser opening a page: API clients, files, the admin API, changes', async () => {
    const refusals: ReadonlyArray<readonly [string, HttpRequest]> = [
      // What an API client or a script accepts.
      ['/console/accounts', { headers: { accept: 'application/json' } }],
      ['/console/accounts', { headers: { accept: '*/*' } }],
      ['/console/accounts', { headers: { accept: 'text/html;q=0, application/json' } }],
      ['/console/accounts', {}],
      // Files and the admin API, even from a browser.
      [ENTRY_MODULE, { headers: { accept: 'text/html' } }],
      ['/admin/v1/status', { headers: { accept: 'text/html' } }],
      ['/admin/v1/accounts', { method: 'POST', json: { name: 'x', plan: 'free' }, headers: { accept: 'text/html' } }],
      ['/console/accounts', { method: 'DELETE', headers: { accept: 'text/html' } }],
    ];
    for (const [path, given] of refusals) {
      const answer = await request(app.operator, path, given);
      assertError(answer, 401, 'unauthorized');
      assert.equal(answer.headers.get('location'), null, path);
    }
  });

  it('a browser with a session gets the page', async () => {
    const cookie = await app.logIn();
    const answer = await request(app.operator, '/console/accounts', { headers: { cookie, accept: 'text/html' } });
    assert.equal(answer.status, 200);
    assert.match(answer.text, /<body data-page="accounts">/);
  });

  it('logs in with the token the login page posts, and the cookie opens the console', async () => {
    const login = await request(app.operator, '/admin/v1/session', { method: 'POST', json: { token: app.token } });
    assert.equal(login.status, 204, login.text);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const answer = await request(app.operator, '/console/accounts', { headers: { cookie } });
    assert.equal(answer.status, 200);
    assert.match(answer.text, /<body data-page="accounts">/);
  });
});

function assertNothingShown(answer: HttpAnswer, path: string): void {
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, path);
  assert.doesNotMatch(answer.text, /<html|<script|console\.js|uPlot/i, `${path} shows nothing of the console`);
  assert.equal(answer.headers.get('etag'), null, `${path}: not even a version of a file`);
}
