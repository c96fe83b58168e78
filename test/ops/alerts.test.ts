import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  ALERT_TESTS_FILE,
  ALERTS_FILE,
  PROMTOOL,
  alertRuleTests,
  alertRules,
  metricNames,
  selectorsOf,
} from '../support/ops-files.ts';

/**
 * The alert rules operators load (ops/alerts.yml, docs/operations.md "Alerts and dashboard"):
 * promtool accepts them and their unit tests pass, every rule is written for a person at 3 a.m.
 * (a severity, a summary, a description, a `for`), and the unit tests trip and spare every rule.
 * Without promtool the promtool checks are skipped with the reason, unless CI=true: then they fail.
 */

const run = promisify(execFile);
const missing = existsSync(PROMTOOL) ? undefined : `${PROMTOOL} is not installed (apt-get install prometheus)`;
if (missing !== undefined && process.env.CI === 'true') throw new Error(`${missing}; CI=true, so this fails`);

describe('ops/alerts.yml through promtool', { skip: missing }, () => {
  it('passes `promtool check rules` with every lint, and names each rule', async () => {
    const { stdout } = await run(PROMTOOL, ['check', 'rules', '--lint=all', '--lint-fatal', ALERTS_FILE]);
    assert.match(stdout, new RegExp(`SUCCESS: ${alertRules().length} rules found`));
  });

  it('passes its unit tests, `promtool test rules`', async () => {
    const { stdout } = await run(PROMTOOL, ['test', 'rules', ALERT_TESTS_FILE]).catch((error: unknown) => {
      // promtool prints what differed (expected and got alerts) on stdout; that is the failure.
      const output = error as { stdout?: string; stderr?: string };
      assert.fail(`promtool test rules failed:\n${output.stdout ?? ''}${output.stderr ?? ''}`);
    });
    assert.match(stdout, /SUCCESS/);
  });
});

describe('the alert rules', () => {
  const rules = alertRules();

  it('has the rules docs/operations.md explains, each once', () => {
    assert.deepEqual(rules.map((rule) => rule.alert).sort(), [
      'PetstoreBanSurge',
      'PetstoreHighErrorRatio',
      'PetstoreHighLatency',
      'PetstoreInstanceDown',
      'PetstoreInstanceNotReady',
      'PetstoreLimiterFallback',
      'PetstoreStorageTimeouts',
      'PetstoreUsageFlushesFailing',
      'PetstoreUsageUncounted',
    ]);
  });

  it('explains every rule in docs/operations.md, "Alerts and dashboard"', () => {
    const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const section = /^## Alerts and dashboard\n([\s\S]*?)^## /m.exec(guide)?.[1] ?? '';
    for (const rule of rules) {
      assert.match(section, new RegExp(`^\\| \`${rule.alert}\` +\\|`, 'm'), `${rule.alert}: no row in the table`);
      assert.match(section, new RegExp(`^- \\*\\*\`${rule.alert}\`\\*\\*: `, 'm'), `${rule.alert}: no runbook entry`);
    }
  });

  it('gives every rule a severity, a summary, a description and a wait before it fires', () => {
    for (const rule of rules) {
      assert.ok(['critical', 'warning'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity`);
      assert.ok((rule.annotations?.summary ?? '').length > 0, `${rule.alert}: summary`);
      assert.ok((rule.annotations?.description ?? '').length > 0, `${rule.alert}: description`);
      assert.match(rule.for ?? '', /^[1-9][0-9]*m$/, `${rule.alert}: for`);
    }
  });

  it('selects only the scrape job of petstore where a metric is not its own (up)', () => {
    for (const rule of rules)
      for (const selector of selectorsOf(rule.expr).filter((found) => found.metric === 'up'))
        assert.deepEqual(selector.matchers, [{ label: 'job', op: '=', value: 'petstore' }], rule.alert);
  });

  it('names metrics only through selectors the checks can read', () => {
    // Otherwise the dashboard test, which holds every selector to what the service exports, would miss one.
    for (const rule of rules)
      assert.deepEqual(
        [...new Set(metricNames(rule.expr))].sort(),
        [...new Set(selectorsOf(rule.expr).map((selector) => selector.metric))].sort(),
        rule.alert,
      );
  });

  it('has unit tests that trip every rule and others that leave it quiet', () => {
    const cases = alertRuleTests();
    for (const rule of rules) {
      const own = cases.filter((test) => test.alertname === rule.alert);
      assert.ok(
        own.some((test) => test.exp_alerts.length > 0),
        `${rule.alert}: no unit test where it fires`,
      );
      assert.ok(
        own.some((test) => test.exp_alerts.length === 0),
        `${rule.alert}: no unit test where it stays quiet`,
      );
    }
  });
});
