import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { runCliInProcess } from '../support/cli-runner.ts';
import { request, type HttpAnswer } from '../support/http-client.ts';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.ts';

/**
 * The operator console in a real browser, over the real server: Debian's chromium driven by
 * playwright-core, as test/docs-browser.test.ts launches it. Traffic on the public port, made with
 * the keys of one account, must show on the console's charts; the console's Revoke and Lift buttons
 * must act on the public port. Without chromium the suite is skipped with the reason, unless
 * CI=true: then it fails.
 *
 * The screenshots of the overview and the account page go to CONSOLE_SCREENSHOT_DIR (a temporary
 * directory when unset); docs/images holds the ones docs/operations.md shows.
 */
const CHROMIUM = '/usr/bin/chromium';
const HOST = 'petstore-operator.test';
const ACCOUNT = 'console-shop';
/** Small enough to reach a 429 and then a ban in a handful of requests. */
const PER_MINUTE = 5;

const missing = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`;
if (missing !== undefined && process.env.CI === 'true') throw new Error(`${missing}; CI=true, so this fails`);

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

function screenshotDir(): string {
  const chosen = process.env.CONSOLE_SCREENSHOT_DIR;
  const dir = chosen === undefined || chosen === '' ? mkdtempSync(join(tmpdir(), 'console-shots-')) : resolve(chosen);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('the operator console in a browser', { skip: missing }, () => {
  let dir: string;
  let server: ServerProcess;
  let browser: Browser;
  let operatorOrigin: string;
  let operatorToken: string;
  let keyA: { key: string; id: string };
  let keyB: { key: string; id: string };
  const shots = screenshotDir();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
    const operatorPort = await freePort();
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`,
      LOG_LEVEL: 'warn',
      DEMO_BOOTSTRAP: 'false',
      USAGE_FLUSH_MS: '100',
      BAN_THRESHOLD: '1',
      METRICS_PORT: String(operatorPort),
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
    [server, browser] = await Promise.all([
      startServerProcess(env),
      chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
        ],
      }),
    ]);
    operatorOrigin = `http://${HOST}:${operatorPort}`;
    await makeTraffic(server);
    await untilAdminShows(`http://127.0.0.1:${operatorPort}`, operatorToken);
  });

  after(async () => {
    await browser?.close();
    await server?.kill();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Key B: one 2xx. Key A: a 2xx, getPet twice (a 2xx and a 404), a bad query (4xx), then on past the
   * account's limit until the 429s turn into a ban.
   */
  async function makeTraffic(target: ServerProcess): Promise<void> {
    assert.equal((await request(target, '/v1/pets', { key: keyB.key })).status, 200);
    const created = await request(target, '/v1/pets', {
      method: 'POST',
      key: keyA.key,
      json: { name: 'Console', categoryId: 1, status: 'available' },
    });
    assert.equal(created.status, 201, created.text);
    const { id } = created.json<{ id: number }>();
    assert.equal((await request(target, `/v1/pets/${id}`, { key: keyA.key })).status, 200);
    assert.equal((await request(target, '/v1/pets/999999999', { key: keyA.key })).status, 404);
    assert.equal((await request(target, '/v1/pets?limit=0', { key: keyA.key })).status, 400);
    let answer: HttpAnswer | undefined;
    const codes: string[] = [];
    for (let sent = 0; sent < 20; sent += 1) {
      answer = await request(target, '/v1/pets', { key: keyA.key });
      const code = answer.status === 200 ? '2xx' : answer.json<{ code: string }>().code;
      codes.push(code);
      if (code === 'key_banned') break;
    }
    assert.ok(codes.includes('rate_limited'), `429s came first: ${codes.join(', ')}`);
    assert.equal(codes.at(-1), 'key_banned', `then the ban: ${codes.join(', ')}`);
    const usage = await request(target, '/v1/usage', { key: keyA.key });
    assert.notEqual(usage.json<{ key: { ban: unknown } }>().key.ban, null, 'key A is banned');
  }

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
      await Promise.all([page.waitForURL(`${operatorOrigin}/console`), page.click('button[type=submit]')]);

      // The overview: requests per hour by outcome, drawn by uPlot.
      const chart = page.locator('.chart[data-total]');
      await chart.locator('canvas').waitFor();
      const totals = await outcomeTotals(chart);
      assert.ok(totals['2xx'] >= 4, `2xx counted: ${JSON.stringify(totals)}`);
      assert.ok(totals['4xx'] >= 2, `4xx counted: ${JSON.stringify(totals)}`);
      assert.ok(totals['429'] >= 1, `429 counted: ${JSON.stringify(totals)}`);
      assert.ok(totals.banned >= 1, `banned counted: ${JSON.stringify(totals)}`);
      assert.equal(await page.locator('.totals li[data-outcome="2xx"] strong').innerText(), String(totals['2xx']));
      assert.match(await page.locator('[data-stat="refused"]').innerText(), /^[1-9]/);
      assert.equal(await page.locator('[data-stat="active-bans"]').innerText(), '1');
      await page.locator('table.status').waitFor();
      await page.screenshot({ path: join(shots, 'console-overview.png'), fullPage: true });

      // The accounts, each with today's use against its limit.
      await page.click('nav a[href="/console/accounts"]');
      const row = page.locator(`tr[data-account="${ACCOUNT}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), /enterprise/);
      assert.ok(Number(await row.locator('meter').getAttribute('value')) > 0, "today's use is shown");

      // The account's page: its last 30 days, its keys, its ban.
      await row.locator('a').click();
      await page.waitForURL(`${operatorOrigin}/console/accounts/${ACCOUNT}`);
      const daily = page.locator('.chart[data-total]');
      await daily.locator('canvas').waitFor();
      assert.ok(Number(await daily.getAttribute('data-total')) > 0, 'the daily chart has the requests');
      const rowA = page.locator(`tr[data-key="${keyA.id}"][data-state]`);
      const rowB = page.locator(`tr[data-key="${keyB.id}"][data-state]`);
      assert.equal(await rowA.getAttribute('data-state'), 'banned');
      assert.equal(await rowB.getAttribute('data-state'), 'active');
      await page.locator('tr[data-key] td.mono').first().waitFor();
      await page.screenshot({ path: join(shots, 'console-account.png'), fullPage: true });

      // Revoke: key B is refused on the public port within a second.
      const revoked = page.waitForResponse((answer) => answer.url().endsWith(`/admin/v1/keys/${keyB.id}/revoke`));
      const clicked = Date.now();
      await rowB.locator('[data-action="revoke"]').click();
      assert.equal((await revoked).status(), 200);
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

      assert.deepEqual(await cspViolations(page), []);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
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

const OUTCOMES = ['2xx', '4xx', '429', 'banned', '5xx'] as const;

/** The totals a chart carries, per outcome, as data-total-<outcome>. */
async function outcomeTotals(chart: Locator): Promise<Record<(typeof OUTCOMES)[number], number>> {
  const entries = await Promise.all(
    OUTCOMES.map(async (outcome) => [outcome, Number(await chart.getAttribute(`data-total-${outcome}`))] as const),
  );
  return Object.fromEntries(entries) as Record<(typeof OUTCOMES)[number], number>;
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

/** Waits until the admin API's history has the requests made: the tally is written every USAGE_FLUSH_MS. */
async function untilAdminShows(operatorUrl: string, token: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  const from = new Date(Date.now() - 2 * 3_600_000).toISOString();
  for (;;) {
    const answer = await fetch(`${operatorUrl}/admin/v1/usage/history?granularity=hour&from=${from}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await answer.json()) as { points?: { outcome: string }[] };
    const outcomes = new Set((body.points ?? []).map((point) => point.outcome));
    if (['2xx', '4xx', '429', 'banned'].every((outcome) => outcomes.has(outcome))) return;
    assert.ok(Date.now() < deadline, `the admin history still lacks outcomes: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
