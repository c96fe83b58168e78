import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { UsageCount } from '../../src/domain/usage-counts.ts';
import { USAGE_OUTCOMES, type UsageOutcome } from '../../src/domain/usage.ts';
import { CHROMIUM_MISSING, launchChromium } from '../support/chromium.ts';
import { runCliInProcess } from '../support/cli-runner.ts';
import { request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { StartedParts } from '../support/started-parts.ts';

/**
 * The operator console in a real browser, over the real server: Debian's chromium driven by
 * playwright-core, as test/docs/browser.test.ts launches it. Traffic on the public port, made with
 * the keys of one account, must show on the console's charts; the console's Revoke and Lift buttons
 * must act on the public port, and show in the audit trail with the CLI's changes. Without chromium
 * the suite is skipped with the reason, unless CI=true: then it fails.
 *
 * Before the server starts, a month of earlier traffic of this account and of a neighbour is written
 * to storage as the flusher writes it, so that the charts have hours and days to draw besides the
 * current one: what they show must be exactly that history plus the requests the test makes.
 *
 * With CONSOLE_SCREENSHOTS=1 the run saves screenshots of the overview, the accounts, an account, the operator tokens
 * and the audit trail in docs/images, where docs/operations.md shows them; without it, it takes none.
 */
const HOST = 'petstore-operator.test';
const ACCOUNT = 'console-shop';
const NEIGHBOUR = 'harbor-pets';
/** The account the console creates. */
const NEWCOMER = 'Console-newcomer';
/** Small enough to reach a 429 and then a ban in a handful of requests. */
const PER_MINUTE = 5;

/** What went wrong while a page ran: failed requests, console errors (CSP violations among them). */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('requestfailed', (failed) => problems.push(`${failed.url()}: ${failed.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

/** Every Content-Security-Policy violation the page reports, gathered in the page itself. */
async function watchCspViolations(page: Page): Promise<void> {
  // Browser code, as text: this project's TypeScript knows no DOM.
  await page.addInitScript({
    content: `
      globalThis.cspViolations = [];
      globalThis.addEventListener('securitypolicyviolation', (event) =>
        globalThis.cspViolations.push(event.violatedDirective + ': ' + event.blockedURI));
    `,
  });
}

async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);
}

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const result = await runCliInProcess(args, env);
  assert.equal(result.status, 0, `petstore ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const SCREENSHOTS =
  process.env.CONSOLE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/images/', import.meta.url)) : undefined;

/** The page (or a part of it) as docs/operations.md shows it, saved only when CONSOLE_SCREENSHOTS=1. */
async function screenshot(shown: Page | Locator, name: string): Promise<void> {
  if (SCREENSHOTS === undefined) return;
  const path = join(SCREENSHOTS, name);
  await ('goto' in shown ? shown.screenshot({ path, fullPage: true }) : shown.screenshot({ path }));
}

describe('the operator console in a browser', { skip: CHROMIUM_MISSING }, () => {
  const parts = new StartedParts();
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let operatorOrigin: string;
  /**
   * The listener by its loopback address, as a script on the machine calls it; a page there is a
   * secure context (the Clipboard API's).
   */
  let operatorDirect: string;
  let operatorToken: string;
  /** The server's settings, which the CLI shares. */
  let env: Record<string, string>;
  let keyA: { key: string; id: string };
  let keyB: { key: string; id: string };
  let history: EarlierTraffic;
  /** The requests the test made on the public port, by outcome, as the usage tally counts them. */
  const live = outcomeCounts();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
    const operatorPort = await freePort();
    env = {
      DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`,
      LOG_LEVEL: 'warn',
      DEMO_BOOTSTRAP: 'false',
      USAGE_FLUSH_MS: '100',
      BAN_THRESHOLD: '1',
      METRICS_PORT: String(operatorPort),
      // The name the browser uses for the listener; without it, the listener refuses the browser's Host.
      OPERATOR_HOSTS: HOST,
    };
    operatorToken = lastLine(await cli(['operator', 'token', 'create', '--name', 'console test'], env));
    await cli(
      ['account', 'create', '--name', ACCOUNT, '--plan', 'enterprise', '--per-minute', String(PER_MINUTE)].concat([
        '--per-day',
        '1000',
      ]),
      env,
    );
    keyA = createdKey(await cli(['key', 'create', '--account', ACCOUNT, '--json'], env));
    keyB = createdKey(await cli(['key', 'create', '--account', ACCOUNT, '--json'], env));
    await cli(['account', 'create', '--name', NEIGHBOUR, '--plan', 'pro'], env);
    const neighbourKey = createdKey(await cli(['key', 'create', '--account', NEIGHBOUR, '--json'], env));
    history = await writeEarlierTraffic(env, { shop: [keyA.id, keyB.id], neighbour: neighbourKey.id });
    [server, browser] = await Promise.all([
      parts.start(
        'the service',
        () => startServerProcess(env),
        (started) => started.kill(),
      ),
      parts.start(
        'chromium',
        () => launchChromium(HOST),
        (started) => started.close(),
      ),
    ]);
    operatorOrigin = `http://${HOST}:${operatorPort}`;
    operatorDirect = `http://127.0.0.1:${operatorPort}`;
    await makeTraffic(server);
    await untilAdminCounts(operatorDirect, operatorToken, (from) => sumCounts(history.since(from), live));
  });

  after(async () => {
    await parts.stopAll();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Key B: one 2xx. Key A: a 2xx, getPet twice (a 2xx and a 404), a bad query (4xx), then on past the
   * account's limit until the 429s turn into a ban.
   */
  async function makeTraffic(target: ServerProcess): Promise<void> {
    const send = async (path: string, options: HttpRequest): Promise<HttpAnswer> => {
      const answer = await request(target, path, options);
      live[outcomeOf(answer)] += 1;
      return answer;
    };
    assert.equal((await send('/v1/pets', { key: keyB.key })).status, 200);
    const created = await send('/v1/pets', {
      method: 'POST',
      key: keyA.key,
      json: { name: 'Console', categoryId: 1, status: 'available' },
    });
    assert.equal(created.status, 201, created.text);
    const { id } = created.json<{ id: number }>();
    assert.equal((await send(`/v1/pets/${id}`, { key: keyA.key })).status, 200);
    assert.equal((await send('/v1/pets/999999999', { key: keyA.key })).status, 404);
    assert.equal((await send('/v1/pets?limit=0', { key: keyA.key })).status, 400);
    const outcomes: UsageOutcome[] = [];
    for (let sent = 0; sent < 20 && outcomes.at(-1) !== 'banned'; sent += 1)
      outcomes.push(outcomeOf(await send('/v1/pets', { key: keyA.key })));
    assert.ok(outcomes.includes('429'), `429s came first: ${outcomes.join(', ')}`);
    assert.equal(outcomes.at(-1), 'banned', `then the ban: ${outcomes.join(', ')}`);
    const usage = await send('/v1/usage', { key: keyA.key });
    assert.notEqual(usage.json<{ key: { ban: unknown } }>().key.ban, null, 'key A is banned');
  }

  it('refuses a wrong token on the login page, saying so, and stays there', async () => {
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

  it('logs in with the token and shows the traffic, the account, its keys and its ban', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems = watchProblems(page);
    await watchCspViolations(page);
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
      const found = await fetch(`${operatorDirect}/admin/v1/audit?target=key:${keyB.id}&action=key.revoke`, {
        headers: { authorization: `Bearer ${operatorToken}` },
      });
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

  /** A page of a new context, logged in at `origin`. */
  async function loggedIn(origin: string, options: BrowserContextOptions = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
    const page = await context.newPage();
    await page.goto(`${origin}/console/login`);
    await page.fill('#token', operatorToken);
    await Promise.all([page.waitForURL(`${origin}/console`), page.click('button[type=submit]')]);
    return page;
  }

  it('creates an account, issues a key, changes the plan, searches and pages, switches ranges, saves CSV', async () => {
    const page = await loggedIn(operatorOrigin);
    await watchCspViolations(page);
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

  it('copies a new key with the Clipboard API where the page may use it', async () => {
    const page = await loggedIn(operatorDirect, { permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      await page.goto(`${operatorDirect}/console/accounts/${NEWCOMER}`);
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
    } finally {
      await page.context().close();
    }
  });

  it('issues a key with the scopes checked; the table shows them; the public port holds the key to them', async () => {
    const page = await loggedIn(operatorOrigin);
    try {
      await page.goto(`${operatorOrigin}/console/accounts/${NEWCOMER}`);
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
      const listed = await fetch(`${operatorDirect}/admin/v1/accounts/${NEWCOMER}/keys?limit=200`, {
        headers: { authorization: `Bearer ${operatorToken}` },
      });
      const keys = ((await listed.json()) as { keys: Array<{ id: string; scopes: string[] }> }).keys;
      assert.deepEqual(keys.find((listedKey) => listedKey.id === keyId)?.scopes, ['pets:read']);
      // The one problem the page met: the browser's note of the refusal's 400.
      assert.deepEqual(problems, [
        'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
      ]);
    } finally {
      await page.context().close();
    }
  });

  it("sets the account's key limit; the keys table names who created each key", async () => {
    const page = await loggedIn(operatorOrigin);
    try {
      await page.goto(`${operatorOrigin}/console/accounts/${NEWCOMER}`);
      const input = page.locator('#key-limit');
      await input.waitFor();
      assert.equal(await input.inputValue(), '20', 'the default');
      await input.fill('7');
      await page.click('#key-limit-form button[type=submit]');
      await page.locator('dd[data-stat="key-limit"]', { hasText: /^7$/ }).waitFor();
      const account = await fetch(`${operatorDirect}/admin/v1/accounts/${NEWCOMER}`, {
        headers: { authorization: `Bearer ${operatorToken}` },
      });
      assert.equal(((await account.json()) as { keyLimit: number }).keyLimit, 7);
      const makers = await page
        .locator('tr[data-key] td[data-created-by]')
        .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-created-by')));
      assert.ok(makers.length > 0, 'the account has keys');
      assert.ok(
        makers.every((maker) => maker === '—' || /^(operator_token|cli|key):/.test(maker ?? '')),
        makers.join(' '),
      );
    } finally {
      await page.context().close();
    }
  });

  it('lists the operator tokens and revokes one; the admin API refuses it; the trail says console', async () => {
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
      await watchCspViolations(page);
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

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

function createdKey(json: string): { key: string; id: string } {
  const created = JSON.parse(json) as { key: string; id: string };
  assert.match(created.key, /^pst_/);
  return created;
}

type OutcomeCounts = Record<UsageOutcome, number>;

function outcomeCounts(): OutcomeCounts {
  return { '2xx': 0, '4xx': 0, '429': 0, banned: 0, '5xx': 0 };
}

function sumCounts(...all: OutcomeCounts[]): OutcomeCounts {
  const sum = outcomeCounts();
  for (const counts of all) for (const outcome of USAGE_OUTCOMES) sum[outcome] += counts[outcome];
  return sum;
}

function total(counts: OutcomeCounts): number {
  return USAGE_OUTCOMES.reduce((sum, outcome) => sum + counts[outcome], 0);
}

/** The outcome the usage tally counts an answer under. */
function outcomeOf(answer: HttpAnswer): UsageOutcome {
  if (answer.status < 400) return '2xx';
  if (answer.status >= 500) return '5xx';
  const { code } = answer.json<{ code: string }>();
  if (code === 'key_banned') return 'banned';
  return code === 'rate_limited' ? '429' : '4xx';
}

/** The totals a chart carries, per outcome, as data-total-<outcome>. */
async function outcomeTotals(chart: Locator): Promise<OutcomeCounts> {
  const totals = outcomeCounts();
  for (const outcome of USAGE_OUTCOMES) totals[outcome] = Number(await chart.getAttribute(`data-total-${outcome}`));
  return totals;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What writeEarlierTraffic wrote. */
interface EarlierTraffic {
  readonly shopId: number;
  /** The counts written for hours from `from` on (ms), of one account or of all. */
  since(from: number, accountId?: number): OutcomeCounts;
}

/**
 * A month of hours before the current one for the shop's two keys, and a busier week for the
 * neighbour (with calls of the deprecated getPet, 429s, a ban and two 5xx), written with the
 * flusher's additive upsert. Days peak at 15:00 UTC, weekends are quieter, and the shop grows.
 */
async function writeEarlierTraffic(
  env: Record<string, string>,
  keys: { readonly shop: readonly [string, string]; readonly neighbour: string },
): Promise<EarlierTraffic> {
  const store = await openStore(loadConfig(env));
  try {
    const shop = await store.accounts.findByName(ACCOUNT);
    const neighbour = await store.accounts.findByName(NEIGHBOUR);
    assert.ok(shop !== undefined && neighbour !== undefined);
    const counts: UsageCount[] = [];
    const add = (count: Omit<UsageCount, 'lastAt'>): void => {
      if (count.count > 0) counts.push({ ...count, lastAt: count.hour + 20 * 60_000 });
    };
    const currentHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const [keyA, keyB] = keys.shop;
    for (let ago = 1; ago < 30 * 24; ago += 1) {
      const hour = currentHour - ago * HOUR_MS;
      const time = new Date(hour);
      const weekend = time.getUTCDay() === 0 || time.getUTCDay() === 6 ? 0.55 : 1;
      const busy = weekend * (0.5 - 0.5 * Math.cos((2 * Math.PI * (time.getUTCHours() - 3)) / 24));
      const growth = 1.3 - (0.6 * ago) / (30 * 24);
      const shopHour = { accountId: shop.id, hour };
      add({
        ...shopHour,
        keyId: keyA,
        operation: 'listPets',
        outcome: '2xx',
        count: Math.round(growth * (4 + 20 * busy)),
      });
      add({
        ...shopHour,
        keyId: keyB,
        operation: 'createPet',
        outcome: '2xx',
        count: Math.round(growth * (1 + 5 * busy)),
      });
      add({ ...shopHour, keyId: keyA, operation: 'listPets', outcome: '4xx', count: ago % 7 === 0 ? 2 : 0 });
      add({ ...shopHour, keyId: keyB, operation: 'createPet', outcome: '429', count: ago % 53 === 0 ? 9 : 0 });
      if (ago > 7 * 24) continue;
      const theirs = { accountId: neighbour.id, keyId: keys.neighbour, hour };
      add({ ...theirs, operation: 'listPets', outcome: '2xx', count: Math.round(10 + 70 * busy) });
      add({ ...theirs, operation: 'getPet', outcome: '2xx', count: Math.round(2 + 8 * busy) });
      add({ ...theirs, operation: 'getPet', outcome: '4xx', count: ago % 5 === 0 ? 3 : 0 });
      add({ ...theirs, operation: 'listPets', outcome: '429', count: ago % 31 === 0 ? 24 : 0 });
      add({ ...theirs, operation: 'listPets', outcome: 'banned', count: ago === 62 ? 14 : 0 });
      add({ ...theirs, operation: 'createPet', outcome: '5xx', count: ago === 100 ? 2 : 0 });
    }
    assert.equal(await store.usage.add(counts, 'waiting'), true, 'the earlier traffic is written');
    return {
      shopId: shop.id,
      since(from, accountId) {
        const sum = outcomeCounts();
        for (const count of counts)
          if (count.hour >= from && (accountId === undefined || count.accountId === accountId))
            sum[count.outcome] += count.count;
        return sum;
      },
    };
  } finally {
    await store.close();
  }
}

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

/**
 * Waits until the admin API counts every request made: the tally counts an answer once it is sent,
 * so the last one may reach the client first.
 */
async function untilAdminCounts(
  operatorDirect: string,
  token: string,
  expectedSince: (from: number) => OutcomeCounts,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  const from = new Date(Date.now() - 7 * DAY_MS).toISOString();
  for (;;) {
    const answer = await fetch(`${operatorDirect}/admin/v1/usage/history?granularity=hour&from=${from}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await answer.json()) as { from: string; points: { outcome: UsageOutcome; count: number }[] };
    const expected = expectedSince(Date.parse(body.from));
    const counted = outcomeCounts();
    for (const point of body.points) counted[point.outcome] += point.count;
    if (USAGE_OUTCOMES.every((outcome) => counted[outcome] === expected[outcome])) return;
    assert.ok(Date.now() < deadline, `counted ${JSON.stringify(counted)}, not ${JSON.stringify(expected)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
