import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { UsageCount } from '../../src/storage/store.ts';
import { USAGE_OUTCOMES, type UsageOutcome } from '../../src/domain/usage.ts';
import { runCliInProcess } from '../support/cli-runner.ts';
import { request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.ts';

/**
 * The operator console in a real browser, over the real server: Debian's chromium driven by
 * playwright-core, as test/docs-browser.test.ts launches it. Traffic on the public port, made with
 * the keys of one account, must show on the console's charts; the console's Revoke and Lift buttons
 * must act on the public port, and show in the audit trail with the CLI's changes. Without chromium
 * the suite is skipped with the reason, unless CI=true: then it fails.
 *
 * Before the server starts, a month of earlier traffic of this account and of a neighbour is written
 * to storage as the flusher writes it, so that the charts have hours and days to draw besides the
 * current one: what they show must be exactly that history plus the requests the test makes.
 *
 * The screenshots of the overview, the account page and the audit trail go to CONSOLE_SCREENSHOT_DIR (a temporary
 * directory when unset); docs/images holds the ones docs/operations.md shows.
 */
const CHROMIUM = '/usr/bin/chromium';
const HOST = 'petstore-operator.test';
const ACCOUNT = 'console-shop';
const NEIGHBOUR = 'harbor-pets';
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
  /** The operator listener on 127.0.0.1, for the admin API called from the test. */
  let operatorUrl: string;
  let operatorToken: string;
  let keyA: { key: string; id: string };
  let keyB: { key: string; id: string };
  let history: EarlierTraffic;
  /** The requests the test made on the public port, by outcome, as the usage tally counts them. */
  const live = outcomeCounts();
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
    await cli(['account', 'create', '--name', NEIGHBOUR, '--plan', 'pro'], env);
    const neighbourKey = createdKey(await cli(['key', 'create', '--account', NEIGHBOUR, '--json'], env));
    history = await writeEarlierTraffic(env, { shop: [keyA.id, keyB.id], neighbour: neighbourKey.id });
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
    operatorUrl = `http://127.0.0.1:${operatorPort}`;
    await makeTraffic(server);
    await untilAdminCounts(operatorUrl, operatorToken, (from) => sumCounts(history.since(from), live));
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
      const totals = await outcomeTotals(chart);
      for (const outcome of ['2xx', '4xx', '429', 'banned'] as const) assert.ok(live[outcome] > 0, outcome);
      const week = sumCounts(history.since(await hourly), live);
      assert.deepEqual(totals, week, 'the earlier week and the requests just made');
      const legend = await page.locator('.totals li[data-outcome="2xx"] strong').innerText();
      assert.equal(legend.replaceAll(',', ''), String(totals['2xx']));
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
      await page.screenshot({ path: join(shots, 'console-account.png'), fullPage: true });

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
      const lifting = page.locator(`tr[data-action="ban.lift"][data-target="key:${keyA.id}"]`);
      assert.match(await lifting.locator('li[data-field="bannedUntil"]').innerText(), / → —$/);
      const actions = await page
        .locator('tr[data-entry]')
        .evaluateAll((rows) =>
          rows.map((row) => `${row.getAttribute('data-action')} ${row.getAttribute('data-actor')}`),
        );
      const byConsole = (await revocation.getAttribute('data-actor')) ?? '';
      const cli = `cli:${userInfo().username}`;
      assert.deepEqual(actions, [
        `ban.lift ${byConsole}`,
        `key.revoke ${byConsole}`,
        `key.create ${cli}`,
        `account.create ${cli}`,
        `key.create ${cli}`,
        `key.create ${cli}`,
        `account.create ${cli}`,
        `operator_token.create ${cli}`,
      ]);
      await page.screenshot({ path: join(shots, 'console-audit.png'), fullPage: true });

      // The admin API has the same entry, with the request id of the console's call.
      const found = await fetch(`${operatorUrl}/admin/v1/audit?target=key:${keyB.id}&action=key.revoke`, {
        headers: { authorization: `Bearer ${operatorToken}` },
      });
      const [entry] = ((await found.json()) as { entries: Array<{ actor: unknown; requestId: string }> }).entries;
      assert.deepEqual(entry?.actor, { kind: 'operator_token', id: byConsole, name: 'console test' });
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
  operatorUrl: string,
  token: string,
  expectedSince: (from: number) => OutcomeCounts,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  const from = new Date(Date.now() - 7 * DAY_MS).toISOString();
  for (;;) {
    const answer = await fetch(`${operatorUrl}/admin/v1/usage/history?granularity=hour&from=${from}`, {
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
