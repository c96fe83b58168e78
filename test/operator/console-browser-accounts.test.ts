import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { cspViolations, describeConsole, screenshot, watchCsp, watchProblems } from '../support/console-browser.ts';
import { ACCOUNT, DAY_MS, HOUR_MS, NEIGHBOUR } from '../support/console-traffic.ts';
import { request } from '../support/http-client.ts';

/**
 * Accounts made and managed in the operator console in a real browser (test/support/console-browser.ts):
 * an account created there, its keys issued (with the scopes checked, copied through the Clipboard API
 * where the page may use it), its plan and key limit changed, applied on the public port within a
 * second; the accounts searched and paged; the charts' ranges switched and saved as CSV.
 */

/** The account the console creates. */
const NEWCOMER = 'Console-newcomer';

describeConsole('the operator console in a browser: accounts and their keys', (run) => {
  it('creates an account, issues a key, changes the plan, searches and pages, switches ranges, saves CSV', async () => {
    const { server, operatorOrigin, loggedIn } = run();
    const page = await loggedIn(operatorOrigin);
    await watchCsp(page);
    await page.reload();
    // The overview's answers all in, so that leaving it cuts none short.
    await Promise.all(
      ['table.status', '[data-stat="active-bans"]', '.history canvas'].map((at) => page.locator(at).waitFor()),
    );
    const problems = watchProblems(page);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    try {
      // A new account, made on the accounts page, opens its own page.
      await page.click('nav a[href="/console/accounts"]');
      await page.locator(`[data-query=""] tr[data-account="${ACCOUNT}"]`).waitFor();
      await screenshot(page, 'console-accounts.png');
      await page.fill('#new-account-name', NEWCOMER);
      await page.selectOption('#new-account-plan', 'pro');
      assert.equal(await page.locator('#new-account-perMinute').isVisible(), false, 'limits are for enterprise only');
      await Promise.all([
        page.waitForURL(`${operatorOrigin}/console/accounts/${NEWCOMER}`),
        page.click('#new-account button[type=submit]'),
      ]);
      assert.match(dialogs.at(-1) ?? '', new RegExp(`Create the account ${NEWCOMER} on the pro plan`));
      assert.equal(await page.locator('[data-stat="plan"]').innerText(), 'pro');

      // A key, shown once in a read-only field, works on the public port.
      await page.click('#issue-key button[type=submit]');
      const field = page.locator('#new-key');
      await field.waitFor();
      const key = await field.inputValue();
      assert.match(key, /^pst_[0-9A-Za-z]{36}$/);
      assert.equal(await field.getAttribute('readonly'), '');
      const keyId = (await field.getAttribute('data-key-id')) ?? '';
      await page.locator(`tr[data-key="${keyId}"][data-state="active"]`).waitFor();
      // Plain HTTP to a name other than the loopback's: no Clipboard API, so Copy selects the key.
      await page.click('[data-action="copy"]');
      assert.match(await page.locator('.new-key [role="status"]').innerText(), /Selected/);
      assert.deepEqual(
        await field.evaluate((input: { selectionStart: number; selectionEnd: number; value: string }) => [
          input.selectionStart,
          input.selectionEnd,
          input.value.length,
        ]),
        [0, key.length, key.length],
      );
      await screenshot(page.locator('section.panel', { has: page.locator('#issue-key') }), 'console-new-key.png');
      const served = await request(server, '/v1/pets', { key });
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('x-ratelimit-limit'), '300', "the pro plan's 300 a minute");
      let sent = 1;
      await page.click('[data-action="dismiss"]');
      assert.equal(await field.count(), 0);
      assert.equal((await page.content()).includes(key), false, 'the key is not shown again');

      // The plan and its limits, changed here, apply on the public port within a second.
      await page.selectOption('#plan-change-plan', 'enterprise');
      await page.fill('#plan-change-perMinute', '50');
      await page.fill('#plan-change-perDay', '500');
      const changed = page.waitForResponse((answer) => answer.url().endsWith(`/admin/v1/accounts/${NEWCOMER}/plan`));
      await page.click('#plan-form button[type=submit]');
      assert.equal((await changed).status(), 200);
      await page.locator('[data-stat="plan"]', { hasText: 'enterprise' }).waitFor();
      const deadline = Date.now() + 3000;
      for (;;) {
        const answer = await request(server, '/v1/pets', { key });
        sent += 1;
        assert.equal(answer.status, 200);
        if (answer.headers.get('x-ratelimit-limit') === '50') {
          assert.equal(answer.headers.get('ratelimit-policy'), '"minute";q=50;w=60, "day";q=500;w=86400');
          break;
        }
        assert.ok(Date.now() < deadline, `still ${answer.headers.get('x-ratelimit-limit')} a minute`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      // The last 24 hours by hour, then the last 90 days by day; each range's CSV is what the chart shows.
      const chart = page.locator('.history .chart[data-total]');
      const day = await showRange(page, '24h', 'hour');
      assert.equal(await page.locator('.history h2').innerText(), 'Requests per hour, last 24 hours');
      assert.equal(day.from, new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS).toISOString());
      await untilChartTotal(chart, sent);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-action="csv"]')]);
      assert.equal(download.suggestedFilename(), `usage-${NEWCOMER}-24h-${day.from.slice(0, 10)}.csv`);
      const csv = readFileSync(await download.path(), 'utf8').split('\r\n');
      assert.equal(csv[0], 'at,operation,outcome,count');
      assert.equal(csv.at(-1), '', 'each row ends with CRLF');
      const listed = csv.slice(1, -1).map((row) => row.split(','));
      for (const [at] of listed) assert.match(at ?? '', /^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
      const listPets = listed.filter(([, operation, outcome]) => operation === 'listPets' && outcome === '2xx');
      assert.equal(
        listPets.reduce((total, [, , , count]) => total + Number(count), 0),
        sent,
        csv.join('\n'),
      );
      const quarter = await showRange(page, '90d', 'day');
      assert.equal(await page.locator('.history h2').innerText(), 'Requests per day, last 90 days');
      assert.equal(quarter.from, new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - 89 * DAY_MS).toISOString());
      assert.equal(Number(await chart.getAttribute('data-total')), sum(quarter));
      assert.equal(await page.locator('[data-range="90d"]').getAttribute('aria-pressed'), 'true');

      // The accounts searched by a part of their names, in any case; the search stays in the address.
      await page.goto(`${operatorOrigin}/console/accounts`);
      await page.fill('#account-search', 'CONSOLE-');
      await page.press('#account-search', 'Enter');
      const found = page.locator('[data-query="CONSOLE-"] tr[data-account]');
      await found.first().waitFor();
      assert.deepEqual(await found.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-account'))), [
        ACCOUNT,
        NEWCOMER,
      ]);
      assert.equal(new URL(page.url()).searchParams.get('q'), 'CONSOLE-');
      await page.fill('#account-search', 'no-such-account');
      await page.locator('[data-query="no-such-account"] .empty').waitFor();

      // A page at a time, oldest first, forward and back.
      await page.goto(`${operatorOrigin}/console/accounts?limit=2`);
      const rows = async (pageNumber: number): Promise<(string | null)[]> => {
        const shown = page.locator(`[data-page="${pageNumber}"] tr[data-account]`);
        await shown.first().waitFor();
        return shown.evaluateAll((found) => found.map((row) => row.getAttribute('data-account')));
      };
      assert.deepEqual(await rows(1), [ACCOUNT, NEIGHBOUR]);
      assert.equal(await page.locator('[data-action="previous"]').isDisabled(), true);
      await page.click('[data-action="next"]');
      assert.deepEqual(await rows(2), [NEWCOMER]);
      assert.equal(await page.locator('[data-action="next"]').isDisabled(), true);
      await page.click('[data-action="previous"]');
      assert.deepEqual(await rows(1), [ACCOUNT, NEIGHBOUR]);

      // The overview's chart switches range too.
      await page.click('nav a[href="/console"]');
      await page.locator('.history .chart[data-total] canvas').waitFor();
      const month = await showRange(page, '30d', 'day');
      const monthChart = page.locator('.history .chart[data-total]');
      assert.equal(Number(await monthChart.getAttribute('data-total')), sum(month));

      // One legend: the totals, or the counts of the day pointed at; none of uPlot's own.
      assert.equal(await page.locator('.u-legend').count(), 0);
      const box = await monthChart.locator('.u-over').boundingBox();
      assert.ok(box !== null);
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      const legend = page.locator('.history .totals');
      await page.locator('.history .totals[data-at]').waitFor();
      const pointed = await legend.locator('.caption').innerText();
      assert.match(pointed, /^\d{4}-\d\d-\d\d$/);
      const okThatDay = month.points
        .filter((point) => point.at === `${pointed}T00:00:00.000Z` && point.outcome === '2xx')
        .reduce((total, point) => total + point.count, 0);
      const shown2xx = async (): Promise<number> =>
        Number((await legend.locator('[data-outcome="2xx"] strong').innerText()).replaceAll(',', ''));
      assert.equal(await shown2xx(), okThatDay);
      await page.mouse.move(0, 0);
      await page.locator('.history .totals:not([data-at])').waitFor();
      assert.equal(await legend.locator('.caption').innerText(), 'Total');
      assert.equal(await shown2xx(), Number(await monthChart.getAttribute('data-total-2xx')));

      assert.ok(dialogs.length === 1, `one confirmation, of the creation: ${dialogs.join(' | ')}`);
      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(problems, []);
    } finally {
      await page.context().close();
    }
  });

  /** Runs `use` on a page logged in at `origin`, open on the account the console created; then closes its context. */
  async function onNewcomerPage(
    origin: string,
    options: BrowserContextOptions,
    use: (page: Page) => Promise<void>,
  ): Promise<void> {
    const page = await run().loggedIn(origin, options);
    try {
      await page.goto(`${origin}/console/accounts/${NEWCOMER}`);
      await use(page);
    } finally {
      await page.context().close();
    }
  }

  it('copies a new key with the Clipboard API where the page may use it', async () => {
    const { server, operatorDirect } = run();
    const clipboard: BrowserContextOptions = { permissions: ['clipboard-read', 'clipboard-write'] };
    await onNewcomerPage(operatorDirect, clipboard, async (page) => {
      await page.selectOption('#new-key-expiry', '30d');
      await page.click('#issue-key button[type=submit]');
      const field = page.locator('#new-key');
      await field.waitFor();
      assert.match(await page.locator('.new-key').innerText(), /expires \d{4}-\d\d-\d\d/);
      await page.click('[data-action="copy"]');
      await page.locator('.new-key [role="status"]', { hasText: 'Copied.' }).waitFor();
      const copied = await page.evaluate(() => (globalThis as unknown as Clipboardish).navigator.clipboard.readText());
      assert.equal(copied, await field.inputValue());
      assert.equal((await request(server, '/v1/pets', { key: copied })).status, 200);
    });
  });

  it('issues a key with the scopes checked; the table shows them; the public port holds the key to them', async () => {
    const { server, operatorOrigin, adminGet } = run();
    await onNewcomerPage(operatorOrigin, {}, async (page) => {
      // Watched from here: leaving the overview cut its requests short.
      const problems = watchProblems(page);
      const boxes = page.locator('#new-key-scopes input[type="checkbox"]');
      await boxes.first().waitFor();
      assert.deepEqual(
        await boxes.evaluateAll((found) =>
          found.map((box) => [box.getAttribute('value'), (box as unknown as { checked: boolean }).checked]),
        ),
        [
          ['pets:read', true],
          ['pets:write', true],
          ['usage:read', true],
          ['keys:manage', false],
        ],
        'every scope but keys:manage, checked: what a key issued without a choice has',
      );

      // None checked: the admin API's refusal, shown in the form, names the scopes to choose from.
      for (const scope of ['pets:read', 'pets:write', 'usage:read']) await page.uncheck(`[data-scope="${scope}"]`);
      await page.click('#issue-key button[type=submit]');
      const problem = page.locator('#issue-key .error');
      await problem.waitFor();
      assert.match(
        await problem.innerText(),
        /field 'scopes' must be a list of one or more of pets:read, pets:write, usage:read, keys:manage/,
      );
      assert.equal(await page.locator('#new-key').count(), 0, 'no key was issued');

      // Read-only: pets:read alone.
      await page.check('[data-scope="pets:read"]');
      await page.click('#issue-key button[type=submit]');
      const field = page.locator('#new-key');
      await field.waitFor();
      assert.equal(await problem.isHidden(), true, 'the refusal is gone');
      assert.match(await page.locator('.new-key').innerText(), /scopes pets:read;/);
      const key = await field.inputValue();
      const keyId = (await field.getAttribute('data-key-id')) ?? '';
      const scopesCell = page.locator(`tr[data-key="${keyId}"][data-state="active"] td.scopes`);
      await scopesCell.waitFor();
      assert.equal(await scopesCell.getAttribute('data-scopes'), 'pets:read');
      assert.equal(await scopesCell.innerText(), 'pets:read');

      assert.equal((await request(server, '/v1/pets', { key })).status, 200);
      const pet = { name: 'Read-only', categoryId: 1, status: 'available' };
      const write = await request(server, '/v1/pets', { method: 'POST', key, json: pet });
      assert.equal(write.status, 403, write.text);
      assert.equal(write.json<{ code: string }>().code, 'insufficient_scope');
      const listed = await adminGet(`/admin/v1/accounts/${NEWCOMER}/keys?limit=200`);
      const keys = ((await listed.json()) as { keys: Array<{ id: string; scopes: string[] }> }).keys;
      assert.deepEqual(keys.find((listedKey) => listedKey.id === keyId)?.scopes, ['pets:read']);
      // The one problem the page met: the browser's note of the refusal's 400.
      assert.deepEqual(problems, [
        'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
      ]);
    });
  });

  it("sets the account's key limit; the keys table names who created each key", async () => {
    const { operatorOrigin, adminGet } = run();
    await onNewcomerPage(operatorOrigin, {}, async (page) => {
      const input = page.locator('#key-limit');
      await input.waitFor();
      assert.equal(await input.inputValue(), '20', 'the default');
      await input.fill('7');
      await page.click('#key-limit-form button[type=submit]');
      await page.locator('dd[data-stat="key-limit"]', { hasText: /^7$/ }).waitFor();
      const account = await adminGet(`/admin/v1/accounts/${NEWCOMER}`);
      assert.equal(((await account.json()) as { keyLimit: number }).keyLimit, 7);
      const makers = await page
        .locator('tr[data-key] td[data-created-by]')
        .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-created-by')));
      assert.ok(makers.length > 0, 'the account has keys');
      assert.ok(
        makers.every((maker) => maker === '—' || /^(operator_token|cli|key):/.test(maker ?? '')),
        makers.join(' '),
      );
    });
  });
});

interface History {
  readonly from: string;
  readonly points: readonly { readonly at: string; readonly outcome: string; readonly count: number }[];
}

/** What the page script sees of the browser's clipboard. */
interface Clipboardish {
  readonly navigator: { readonly clipboard: { readText(): Promise<string> } };
}

function sum(history: History): number {
  return history.points.reduce((total, point) => total + point.count, 0);
}

/** Clicks the range's button and gives the history it fetched, once its chart is drawn. */
async function showRange(page: Page, range: string, granularity: 'hour' | 'day'): Promise<History> {
  const [answer] = await Promise.all([
    page.waitForResponse((response) => response.url().includes(`/usage/history?granularity=${granularity}&`)),
    page.click(`[data-range="${range}"]`),
  ]);
  const history = (await answer.json()) as History;
  await page.locator(`.history [data-range="${range}"][aria-pressed="true"]`).waitFor();
  await page.locator('.history .chart[data-total] canvas').waitFor();
  return history;
}

/** Waits until the chart counts `expected` requests: its range is fetched again until it does. */
async function untilChartTotal(chart: Locator, expected: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const total = Number(await chart.getAttribute('data-total'));
    if (total === expected) return;
    assert.ok(Date.now() < deadline, `the chart counts ${total}, not ${expected}`);
    await chart.page().click('.history [aria-pressed="true"]');
    await chart.page().waitForTimeout(100);
  }
}
