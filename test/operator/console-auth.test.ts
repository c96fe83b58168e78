import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../src/operator/console/console-routes.ts';
import { assertError, request, type HttpAnswer } from '../support/http-client.ts';
import { startOperatorTestApp, type OperatorTestApp } from './operator-app.ts';

/**
 * The console on the operator listener: its pages and files need the operator token (header or
 * cookie) and show nothing without it; only the login page and its files are open.
 */
const GUARDED = [
  '/console',
  '/console/accounts',
  '/console/accounts/some-shop',
  '/console/deprecated',
  '/console/assets/console.js',
  '/console/assets/uplot.js',
  '/console/assets/console.css',
];
const OPEN = ['/console/login', '/console/login/assets/login.js', '/console/login/assets/console.css'];

describe('the console behind the operator token', () => {
  let app: OperatorTestApp;

  before(async () => {
    app = await startOperatorTestApp();
  });

  after(() => app.close());

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

  it('serves the pages and files with the token, in the header or in the cookie', async () => {
    for (const path of GUARDED) {
      for (const given of [{ key: app.token }, { headers: { cookie: `petstore_operator=${app.token}` } }]) {
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
