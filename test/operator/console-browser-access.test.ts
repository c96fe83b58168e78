import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  cli,
  cspViolations,
  describeConsole,
  screenshot,
  watchCsp,
  watchProblems,
} from '../support/console-browser.ts';

/**
 * Getting into the operator console in a real browser (test/support/console-browser.ts): a wrong token
 * is refused on the login page, a browser without a session is sent to log in and back, logging out
 * ends the session on the server, and the operator tokens page revokes a token, which the admin API
 * then refuses and the audit trail shows as the console's.
 */

describeConsole('the operator console in a browser: logging in and the operator tokens', (run) => {
  it('refuses a wrong token on the login page, saying so, and stays there', async () => {
    const { browser, operatorOrigin } = run();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${operatorOrigin}/console/login`);
      await page.fill('#token', 'pso_0000000000000000_00000000000000000000000000000000');
      await page.click('button[type=submit]');
      const problem = page.locator('#login-error');
      await problem.waitFor();
      assert.match(await problem.innerText(), /not valid/);
      assert.equal(page.url(), `${operatorOrigin}/console/login`);
      assert.deepEqual(await context.cookies(), [], 'no cookie for a wrong token');
    } finally {
      await context.close();
    }
  });

  it('sends a browser without a session to log in and back; logging out ends the session on the server', async () => {
    const { browser, operatorOrigin, operatorDirect, operatorToken, keyA } = run();
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${operatorOrigin}/console/deprecated`);
      assert.equal(page.url(), `${operatorOrigin}/console/login?next=%2Fconsole%2Fdeprecated`);
      await page.fill('#token', operatorToken);
      await Promise.all([page.waitForURL(`${operatorOrigin}/console/deprecated`), page.click('button[type=submit]')]);
      await page.locator(`tr[data-key="${keyA.id}"]`).waitFor();

      // The cookie holds a session id, not the token, out of the page's scripts' reach.
      const cookies = await context.cookies();
      assert.equal(cookies.length, 1);
      const [cookie] = cookies;
      assert.ok(cookie !== undefined);
      assert.equal(cookie.name, 'petstore_operator');
      assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(!operatorToken.includes(cookie.value) && !cookie.value.includes(operatorToken.slice(21)));
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Strict');
      assert.equal(cookie.secure, false, 'the listener is plain HTTP');
      const replay = (): Promise<Response> =>
        fetch(`${operatorDirect}/admin/v1/status`, { headers: { cookie: `petstore_operator=${cookie.value}` } });
      assert.equal((await replay()).status, 200, 'the cookie opens the admin API while the session lasts');

      await Promise.all([page.waitForURL(`${operatorOrigin}/console/login`), page.click('#logout')]);
      assert.deepEqual(await context.cookies(), [], 'the browser dropped the cookie');
      const replayed = await replay();
      assert.equal(replayed.status, 401, 'the old cookie, replayed, opens nothing: the session ended on the server');
      assert.equal(((await replayed.json()) as { code: string }).code, 'unauthorized');
      // Back on a page, the browser is sent to log in again.
      await page.goto(`${operatorOrigin}/console`);
      assert.equal(page.url(), `${operatorOrigin}/console/login`);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  it('lists the operator tokens and revokes one; the admin API refuses it; the trail says console', async () => {
    const { env, operatorOrigin, operatorDirect, operatorToken, loggedIn } = run();
    const spare = JSON.parse(await cli(['operator', 'token', 'create', '--name', 'spare', '--json'], env)) as {
      id: string;
      token: string;
    };
    const byToken = (token: string): Promise<Response> =>
      fetch(`${operatorDirect}/admin/v1/status`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await byToken(spare.token)).status, 200, 'the spare token opens the admin API');
    const page = await loggedIn(operatorOrigin);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    try {
      // The watchers take effect from the next load, so the page is loaded again once its first load has shown its
      // tokens: a reload earlier would abort that load's request, which the watchers would count as a problem.
      await page.goto(`${operatorOrigin}/console/operator-tokens`);
      await page.locator('tr[data-token]').first().waitFor();
      const problems = watchProblems(page);
      await watchCsp(page);
      await page.reload();
      const ownId = operatorToken.split('_')[1] ?? '';
      const own = page.locator(`tr[data-token="${ownId}"][data-state="active"]`);
      const row = page.locator(`tr[data-token="${spare.id}"]`);
      await Promise.all([own.waitFor(), row.waitFor()]);
      assert.equal(await page.locator('nav a[aria-current="page"]').innerText(), 'Operator tokens');
      assert.match(await own.innerText(), /console test/);
      assert.deepEqual(
        await page
          .locator('tr[data-token]')
          .evaluateAll((rows) => rows.map((found) => found.getAttribute('data-token'))),
        [ownId, spare.id],
        'every token, oldest first',
      );
      assert.match(await row.innerText(), /spare/);
      assert.equal(await row.getAttribute('data-state'), 'active');
      await screenshot(page, 'console-operator-tokens.png');

      const revoked = page.waitForResponse((answer) => answer.url().endsWith(`/operator-tokens/${spare.id}/revoke`));
      await row.locator('[data-action="revoke"]').click();
      assert.match(dialogs.at(-1) ?? '', new RegExp(`Revoke operator token ${spare.id} \\(spare\\)\\?`));
      assert.equal((await revoked).status(), 200);
      await page.locator(`tr[data-token="${spare.id}"][data-state="revoked"]`).waitFor();
      assert.equal(await page.locator(`tr[data-token="${spare.id}"] [data-action="revoke"]`).count(), 0);
      assert.equal((await byToken(spare.token)).status, 401, 'refused from the answer on');
      assert.equal((await byToken(operatorToken)).status, 200, 'the console token is untouched');

      // The trail, filtered through the page's form to the console's changes: this revocation first.
      await page.goto(`${operatorOrigin}/console/audit`);
      await page.selectOption('#audit-filters select[name="via"]', 'console');
      await Promise.all([page.waitForURL(/\/console\/audit\?.*via=console/), page.click('#audit-filters button')]);
      await page.locator('tr[data-entry]').first().waitFor();
      const shown = await page
        .locator('tr[data-entry]')
        .evaluateAll((rows) =>
          rows.map((found) => [found.getAttribute('data-via'), found.getAttribute('data-action')]),
        );
      assert.deepEqual(shown[0], ['console', 'operator_token.revoke']);
      assert.ok(
        shown.every(([via]) => via === 'console'),
        JSON.stringify(shown),
      );
      assert.equal(
        await page.locator(`tr[data-action="operator_token.revoke"][data-target="operator_token:${spare.id}"]`).count(),
        1,
      );
      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(problems, []);
    } finally {
      await page.context().close();
    }
  });
});
