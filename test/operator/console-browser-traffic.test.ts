import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { USAGE_OUTCOMES } from '../../src/domain/usage.ts';
import { cspViolations, describeConsole, screenshot, watchCsp, watchProblems } from '../support/console-browser.ts';
import { ACCOUNT, outcomeCounts, sumCounts, total, type OutcomeCounts } from '../support/console-traffic.ts';
import { request } from '../support/http-client.ts';
import type { ServerProcess } from '../support/server-process.ts';

/**
 * The operator console in a real browser, over the real server (test/support/console-browser.ts).
 * Traffic on the public port, made with the keys of one account, must show on the console's charts,
 * exactly the earlier history written to storage plus the requests made; the console's Revoke and
 * Lift buttons must act on the public port, and show in the audit trail with the CLI's changes.
 */

describeConsole('the operator console in a browser: traffic, keys and the audit trail', (run) => {
  it('logs in with the token and shows the traffic, the account, its keys and its ban', async () => {
    const { browser, server, operatorOrigin, operatorToken, keyA, keyB, history, live, adminGet } = run();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    await watchCsp(page);
    page.on('dialog', (dialog) => void dialog.accept());
    try {
      const loginAnswer = await page.goto(`${operatorOrigin}/console/login`);
      assert.equal(loginAnswer?.status(), 200);
      assert.match(loginAnswer?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
      await page.fill('#token', operatorToken);
      const hourly = rangeStart(page, 'granularity=hour');
      await Promise.all([page.waitForURL(`${operatorOrigin}/console`), page.click('button[type=submit]')]);

      // The overview: requests per hour by outcome, drawn by uPlot.
      const chart = page.locator('.chart[data-total]');
      await chart.locator('canvas').waitFor();
      // The pointer off the chart: its legend shows the period's totals.
      await page.mouse.move(0, 0);
      const totals = await outcomeTotals(chart);
      for (const outcome of ['2xx', '4xx', '429', 'banned'] as const) assert.ok(live[outcome] > 0, outcome);
      const week = sumCounts(history.since(await hourly), live);
      assert.deepEqual(totals, week, 'the earlier week and the requests just made');
      const legend = await page.locator('.totals li[data-outcome="2xx"] strong').innerText();
      assert.equal(legend.replaceAll(',', ''), String(totals['2xx']));
      assert.match(await page.locator('[data-stat="refused"]').innerText(), /^[1-9]/);
      assert.equal(await page.locator('[data-stat="active-bans"]').innerText(), '1');
      await page.locator('table.status').waitFor();
      await screenshot(page, 'console-overview.png');

      // The accounts, each with today's use against its limit.
      await page.click('nav a[href="/console/accounts"]');
      const row = page.locator(`tr[data-account="${ACCOUNT}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), /enterprise/);
      assert.ok(Number(await row.locator('meter').getAttribute('value')) > 0, "today's use is shown");

      // The account's page: its last 30 days, its keys, its ban.
      const daily = rangeStart(page, 'granularity=day');
      await row.locator('a').click();
      await page.waitForURL(`${operatorOrigin}/console/accounts/${ACCOUNT}`);
      const monthChart = page.locator('.chart[data-total]');
      await monthChart.locator('canvas').waitFor();
      const month = total(sumCounts(history.since(await daily, history.shopId), live));
      assert.equal(Number(await monthChart.getAttribute('data-total')), month, "the account's month and today");
      const rowA = page.locator(`tr[data-key="${keyA.id}"][data-state]`);
      const rowB = page.locator(`tr[data-key="${keyB.id}"][data-state]`);
      assert.equal(await rowA.getAttribute('data-state'), 'banned');
      assert.equal(await rowB.getAttribute('data-state'), 'active');
      await page.locator('tr[data-key] td.mono').first().waitFor();
      await screenshot(page, 'console-account.png');

      // Revoke: key B is refused on the public port within a second.
      const revoked = page.waitForResponse((answer) => answer.url().endsWith(`/admin/v1/keys/${keyB.id}/revoke`));
      const clicked = Date.now();
      await rowB.locator('[data-action="revoke"]').click();
      assert.equal((await revoked).status(), 200);
      const revocationId = (await revoked).headers()['x-request-id'];
      await untilStatus(server, keyB.key, 401, clicked + 1000);
      await page.locator(`tr[data-key="${keyB.id}"][data-state="revoked"]`).waitFor();

      // Lift: key A's ban is gone.
      const lifted = page.waitForResponse((answer) => answer.url().endsWith(`/admin/v1/bans/${keyA.id}/lift`));
      await rowA.locator('[data-action="lift"]').click();
      assert.equal((await lifted).status(), 200);
      const usage = await request(server, '/v1/usage', { key: keyA.key });
      assert.equal(usage.status, 200);
      assert.equal(usage.json<{ key: { ban: unknown } }>().key.ban, null);
      await page.locator(`tr[data-key="${keyA.id}"][data-state="active"]`).waitFor();
      assert.equal(await page.locator(`tr[data-key="${keyA.id}"] [data-action="lift"]`).count(), 0);

      // The callers of the deprecated getPet: key A, with its two calls.
      await page.click('nav a[href="/console/deprecated"]');
      const caller = page.locator(`tr[data-key="${keyA.id}"]`);
      await caller.waitFor();
      assert.equal(await caller.locator('td.number').innerText(), '2');
      assert.equal(await caller.locator('a').innerText(), ACCOUNT);

      // The audit trail: the revocation and the lifting just made, by the console's token, after the CLI's changes.
      await page.click('nav a[href="/console/audit"]');
      await page.waitForURL(`${operatorOrigin}/console/audit`);
      const revocation = page.locator(`tr[data-action="key.revoke"][data-target="key:${keyB.id}"]`);
      await revocation.waitFor();
      assert.match(await revocation.innerText(), /console test/);
      assert.match(
        await revocation.locator('li[data-field="revokedAt"]').innerText(),
        /^revokedAt: — → \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
      );
      const creation = page.locator(`tr[data-action="key.create"][data-target="key:${keyB.id}"]`);
      assert.equal(
        await creation.locator('li[data-field="scopes"]').innerText(),
        'scopes: pets:read, pets:write, usage:read',
      );
      const lifting = page.locator(`tr[data-action="ban.lift"][data-target="key:${keyA.id}"]`);
      assert.match(await lifting.locator('li[data-field="bannedUntil"]').innerText(), / → —$/);
      const actions = await page
        .locator('tr[data-entry]')
        .evaluateAll((rows) =>
          rows.map((row) => ['action', 'actor', 'via'].map((name) => row.getAttribute(`data-${name}`)).join(' ')),
        );
      const byConsole = (await revocation.getAttribute('data-actor')) ?? '';
      const cli = `cli:${userInfo().username}`;
      assert.deepEqual(actions, [
        `ban.lift ${byConsole} console`,
        `key.revoke ${byConsole} console`,
        `key.create ${cli} cli`,
        `account.create ${cli} cli`,
        `key.create ${cli} cli`,
        `key.create ${cli} cli`,
        `account.create ${cli} cli`,
        `operator_token.create ${cli} cli`,
      ]);
      assert.match(await revocation.innerText(), /\bconsole\b/, 'the row says through what');
      await screenshot(page, 'console-audit.png');

      // The admin API has the same entry, with the request id of the console's call.
      const found = await adminGet(`/admin/v1/audit?target=key:${keyB.id}&action=key.revoke`);
      const [entry] = ((await found.json()) as { entries: Array<{ actor: unknown; via: string; requestId: string }> })
        .entries;
      assert.deepEqual(entry?.actor, { kind: 'operator_token', id: byConsole, name: 'console test' });
      assert.equal(entry.via, 'console');
      assert.equal(entry.requestId, revocationId);

      // Filtered by action, through the page's form.
      await page.selectOption('#audit-filters select[name="action"]', 'ban.lift');
      await Promise.all([page.waitForURL(/\/console\/audit\?.*action=ban\.lift/), page.click('#audit-filters button')]);
      await page.locator('tr[data-entry]').first().waitFor();
      assert.deepEqual(
        await page.locator('tr[data-entry]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action'))),
        ['ban.lift'],
      );
      // By actor, from a link on a row: the CLI's user.
      await page.goto(`${operatorOrigin}/console/audit`);
      await Promise.all([
        page.waitForURL(/actor=cli/),
        page.locator(`tr[data-action="operator_token.create"] a[href*="actor="]`).click(),
      ]);
      await page.locator('tr[data-entry]').first().waitFor();
      assert.equal(await page.locator('tr[data-entry]').count(), 6);

      // Pages of three, newest first: the next page's link, until there is none.
      await page.goto(`${operatorOrigin}/console/audit?limit=3`);
      const paged: string[] = [];
      for (;;) {
        await page.locator('tr[data-entry]').first().waitFor();
        const rows = page.locator('tr[data-entry]');
        paged.push(...(await rows.evaluateAll((found) => found.map((row) => row.getAttribute('data-action') ?? ''))));
        const next = page.locator('a[rel="next"]');
        if ((await next.count()) === 0) break;
        assert.equal(await rows.count(), 3);
        const href = (await next.getAttribute('href')) ?? '';
        await Promise.all([page.waitForURL(`${operatorOrigin}${href}`), next.click()]);
      }
      assert.deepEqual(
        paged,
        actions.map((action) => action.split(' ')[0]),
      );

      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

/** The start of the range of the page's next history request (its answer's `from`), in ms. */
async function rangeStart(page: Page, query: string): Promise<number> {
  const answer = await page.waitForResponse((response) => response.url().includes(`/usage/history?${query}`));
  return Date.parse(((await answer.json()) as { from: string }).from);
}

/** Polls the public port with the key until it answers `status`; fails once past `deadline` (ms since epoch). */
async function untilStatus(target: ServerProcess, key: string, status: number, deadline: number): Promise<void> {
  for (;;) {
    const last = (await request(target, '/v1/pets', { key })).status;
    if (last === status) return;
    assert.ok(Date.now() < deadline, `still ${last} at the deadline, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The totals a chart carries, per outcome, as data-total-<outcome>. */
async function outcomeTotals(chart: Locator): Promise<OutcomeCounts> {
  const totals = outcomeCounts();
  for (const outcome of USAGE_OUTCOMES) totals[outcome] = Number(await chart.getAttribute(`data-total-${outcome}`));
  return totals;
}
