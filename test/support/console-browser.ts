import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe } from 'node:test';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { CHROMIUM_MISSING, launchChromium } from './chromium.ts';
import { runCliInProcess } from './cli-runner.ts';
import {
  ACCOUNT,
  makeTraffic,
  NEIGHBOUR,
  outcomeCounts,
  PER_MINUTE,
  sumCounts,
  untilAdminCounts,
  writeEarlierTraffic,
  type EarlierTraffic,
  type IssuedKey,
  type OutcomeCounts,
} from './console-traffic.ts';
import { freePort, startServerProcess, type ServerProcess } from './server-process.ts';
import { StartedParts } from './started-parts.ts';

/**
 * The operator console in a real browser, over the real server, for the console's browser tests
 * (test/operator/console-browser-*.test.ts): Debian's chromium driven by playwright-core, as
 * test/docs/browser.test.ts launches it, once per test file. Without chromium those suites are
 * skipped with the reason, unless CI=true: then they fail (test/support/chromium.ts).
 *
 * Before the server starts, a month of earlier traffic of one account and of a neighbour is written
 * to storage as the flusher writes it, so that the charts have hours and days to draw besides the
 * current one; then the account's keys make traffic on the public port (test/support/console-traffic.ts).
 *
 * With CONSOLE_SCREENSHOTS=1 the tests save screenshots of the overview, the accounts, an account, the
 * operator tokens and the audit trail in docs/images, where docs/operations.md shows them; without it,
 * they take none.
 */
/** The name the browser gives the operator listener, which it resolves to 127.0.0.1. */
const HOST = 'petstore-operator.test';

/** What went wrong while a page ran: failed requests, console errors (CSP violations among them). */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('requestfailed', (failed) => problems.push(`${failed.url()}: ${failed.failure()?.errorText}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

/** Every Content-Security-Policy violation the page reports, gathered in the page itself. */
export async function watchCsp(page: Page): Promise<void> {
  // Browser code, as text: this project's TypeScript knows no DOM.
  await page.addInitScript({
    content: `
      globalThis.cspViolations = [];
      globalThis.addEventListener('securitypolicyviolation', (event) =>
        globalThis.cspViolations.push(event.violatedDirective + ': ' + event.blockedURI));
    `,
  });
}

export async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);
}

export async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const result = await runCliInProcess(args, env);
  assert.equal(result.status, 0, `petstore ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const SCREENSHOTS =
  process.env.CONSOLE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/images/', import.meta.url)) : undefined;

/** The page (or a part of it) as docs/operations.md shows it, saved only when CONSOLE_SCREENSHOTS=1. */
export async function screenshot(shown: Page | Locator, name: string): Promise<void> {
  if (SCREENSHOTS === undefined) return;
  const path = join(SCREENSHOTS, name);
  await ('goto' in shown ? shown.screenshot({ path, fullPage: true }) : shown.screenshot({ path }));
}

/** What a console test has to work with, once its suite started it. */
export interface ConsoleRun {
  readonly browser: Browser;
  readonly server: ServerProcess;
  /** The server's settings, which the CLI shares. */
  readonly env: Record<string, string>;
  /** The listener by the name the browser uses for it (HOST). */
  readonly operatorOrigin: string;
  /**
   * The listener by its loopback address, as a script on the machine calls it; a page there is a
   * secure context (the Clipboard API's).
   */
  readonly operatorDirect: string;
  readonly operatorToken: string;
  /** The two keys of ACCOUNT. */
  readonly keyA: IssuedKey;
  readonly keyB: IssuedKey;
  readonly history: EarlierTraffic;
  /** The requests the suite made on the public port, by outcome, as the usage tally counts them. */
  readonly live: OutcomeCounts;
  /** A GET of the admin API with the operator token, as a script on the machine makes it. */
  adminGet(path: string): Promise<Response>;
  /** A page of a new context, logged in at `origin`. */
  loggedIn(origin: string, options?: BrowserContextOptions): Promise<Page>;
}

/**
 * A suite of the console's browser tests, skipped without chromium (failed under CI=true). Before its
 * tests: the server (on a SQLite file of its own) with ACCOUNT and NEIGHBOUR, their earlier traffic
 * and the traffic of ACCOUNT's keys, counted by the admin API, and a browser; after them, all stopped
 * and removed. Its tests read what they work with through `run()`.
 */
export function describeConsole(title: string, tests: (run: () => ConsoleRun) => void): void {
  describe(title, { skip: CHROMIUM_MISSING }, () => {
    const parts = new StartedParts();
    let dir: string | undefined;
    let started: ConsoleRun | undefined;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
      started = await startConsole(parts, dir);
    });
    after(async () => {
      await parts.stopAll();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });
    tests(() => {
      assert.ok(started !== undefined, 'the console is read before its suite started it');
      return started;
    });
  });
}

async function startConsole(parts: StartedParts, dir: string): Promise<ConsoleRun> {
  const live = outcomeCounts();
  const operatorPort = await freePort();
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`,
    LOG_LEVEL: 'warn',
    DEMO_BOOTSTRAP: 'false',
    USAGE_FLUSH_MS: '100',
    BAN_THRESHOLD: '1',
    METRICS_PORT: String(operatorPort),
    // The name the browser uses for the listener; without it, the listener refuses the browser's Host.
    OPERATOR_HOSTS: HOST,
  };
  const operatorToken = lastLine(await cli(['operator', 'token', 'create', '--name', 'console test'], env));
  await cli(
    ['account', 'create', '--name', ACCOUNT, '--plan', 'enterprise', '--per-minute', String(PER_MINUTE)].concat([
      '--per-day',
      '1000',
    ]),
    env,
  );
  const keyA = createdKey(await cli(['key', 'create', '--account', ACCOUNT, '--json'], env));
  const keyB = createdKey(await cli(['key', 'create', '--account', ACCOUNT, '--json'], env));
  await cli(['account', 'create', '--name', NEIGHBOUR, '--plan', 'pro'], env);
  const neighbourKey = createdKey(await cli(['key', 'create', '--account', NEIGHBOUR, '--json'], env));
  const history = await writeEarlierTraffic(env, { shop: [keyA.id, keyB.id], neighbour: neighbourKey.id });
  const [server, browser] = await Promise.all([
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
  const operatorOrigin = `http://${HOST}:${operatorPort}`;
  const operatorDirect = `http://127.0.0.1:${operatorPort}`;
  await makeTraffic(server, { keyA, keyB }, live);
  await untilAdminCounts(operatorDirect, operatorToken, (from) => sumCounts(history.since(from), live));
  return {
    browser,
    server,
    env,
    operatorOrigin,
    operatorDirect,
    operatorToken,
    keyA,
    keyB,
    history,
    live,
    adminGet: (path) => fetch(`${operatorDirect}${path}`, { headers: { authorization: `Bearer ${operatorToken}` } }),
    async loggedIn(origin, options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
      const page = await context.newPage();
      await page.goto(`${origin}/console/login`);
      await page.fill('#token', operatorToken);
      await Promise.all([page.waitForURL(`${origin}/console`), page.click('button[type=submit]')]);
      return page;
    },
  };
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

function createdKey(json: string): IssuedKey {
  const created = JSON.parse(json) as IssuedKey;
  assert.match(created.key, /^pst_/);
  return created;
}
