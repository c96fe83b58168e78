import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core, which downloads no browser of its own. Without it a
 * browser suite is skipped with the reason (`CHROMIUM_MISSING` as node:test's `skip`), unless
 * CI=true: then importing this module fails the file.
 */
export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_MISSING = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium)`;
if (CHROMIUM_MISSING !== undefined && process.env.CI === 'true') {
  throw new Error(`${CHROMIUM_MISSING}; CI=true, so the browser suites fail`);
}

/** A start takes about a second; one that hangs fails the suite after this, not Playwright's three minutes. */
const LAUNCH_TIMEOUT_MS = 20_000;

/**
 * A headless chromium with a new, empty profile, whose look-ups of `host` reach 127.0.0.1. Its
 * background traffic is off: this machine's closed network refuses it, many connections at a time.
 */
export function launchChromium(host: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: LAUNCH_TIMEOUT_MS,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP ${host} 127.0.0.1`,
    ],
  });
}
