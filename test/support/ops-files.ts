import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/** The operators' files under ops/: Prometheus alert rules, their promtool tests, the Grafana dashboard. */
export const OPS_DIR = join(import.meta.dirname, '..', '..', 'ops');
export const ALERTS_FILE = join(OPS_DIR, 'alerts.yml');
export const ALERT_TESTS_FILE = join(OPS_DIR, 'alerts.test.yml');
export const DASHBOARD_FILE = join(OPS_DIR, 'grafana-dashboard.json');

/** Debian's package `prometheus` installs both. */
export const PROMTOOL = '/usr/bin/promtool';
export const PROMETHEUS = '/usr/bin/prometheus';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

interface RuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly AlertRule[] }[];
}

export function alertRules(): AlertRule[] {
  const file = parse(readFileSync(ALERTS_FILE, 'utf8')) as RuleFile;
  return file.groups.flatMap((group) => group.rules);
}

export interface AlertRuleTest {
  readonly alertname: string;
  readonly eval_time: string;
  readonly exp_alerts: readonly unknown[];
}

/** Every `alert_rule_test` case of ops/alerts.test.yml, over all its tests. */
export function alertRuleTests(): AlertRuleTest[] {
  const file = parse(readFileSync(ALERT_TESTS_FILE, 'utf8')) as {
    readonly tests: readonly { readonly alert_rule_test?: readonly AlertRuleTest[] }[];
  };
  return file.tests.flatMap((test) => test.alert_rule_test ?? []);
}

export interface DataSourceRef {
  readonly type: string;
  readonly uid: string;
}

export interface PanelTarget {
  readonly refId: string;
  readonly expr: string;
  readonly datasource?: DataSourceRef;
}

export interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly datasource?: DataSourceRef;
  readonly targets?: readonly PanelTarget[];
  /** A collapsed row keeps its panels here. */
  readonly panels?: readonly Panel[];
}

export interface TemplateVariable {
  readonly name: string;
  readonly type: string;
  readonly query?: unknown;
  readonly datasource?: DataSourceRef;
}

export interface Dashboard {
  readonly schemaVersion: number;
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly TemplateVariable[] };
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel but rows, those inside collapsed rows included. */
export function dataPanels(board: Dashboard): Panel[] {
  return board.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
}

export interface LabelMatcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

export interface Selector {
  readonly metric: string;
  readonly matchers: readonly LabelMatcher[];
}

const SELECTOR = /\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{([^}]*)\}|(?=\[))/g;
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The vector selectors of a PromQL expression: a metric name followed by matchers or a range. Enough
 * for the expressions under ops/, which always name the metric; `metricNames` finds any it missed.
 */
export function selectorsOf(expr: string): Selector[] {
  return [...expr.matchAll(SELECTOR)].map((match) => ({
    metric: match[1] as string,
    matchers: [...(match[2] ?? '').matchAll(MATCHER)].map((matcher) => ({
      label: matcher[1] as string,
      op: matcher[2] as LabelMatcher['op'],
      value: matcher[3] as string,
    })),
  }));
}

/** Every name in the expression that looks like one of the service's metrics or Prometheus's `up`. */
export function metricNames(expr: string): string[] {
  const outsideStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...outsideStrings.matchAll(/\b(?:petstore|process|nodejs)_[a-zA-Z0-9_]+|\bup\b/g)].map((match) => match[0]);
}
