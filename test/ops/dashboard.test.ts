import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type ErrorBody, type HttpAnswer, type HttpRequest, type Pet } from '../support/http-client.ts';
import {
  ALERTS_FILE,
  PROMETHEUS,
  alertRules,
  dashboard,
  dataPanels,
  metricNames,
  selectorsOf,
  type Dashboard,
  type Selector,
} from '../support/ops-files.ts';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { holdWriteLock } from '../support/sqlite-write-lock.ts';

/**
 * The Grafana dashboard (ops/grafana-dashboard.json) against the real thing: Debian's Prometheus
 * scrapes the real server every second while it answers a little traffic of every kind the panels
 * show (200s, a 201, a 304, a 404, a 401, 429s and a ban, 503s and failed usage flushes while another
 * process holds the SQLite write lock, calls of the deprecated getPet); then every panel's query,
 * with the dashboard's variables filled in as Grafana would, must parse and return data, and every
 * metric and label that the panels and the alert rules name must be one the service exported. The
 * rules are loaded too and must evaluate without error. Without Prometheus the live part is skipped
 * with the reason, unless CI=true: then it fails.
 */

const missing = existsSync(PROMETHEUS) ? undefined : `${PROMETHEUS} is not installed (apt-get install prometheus)`;
if (missing !== undefined && process.env.CI === 'true') throw new Error(`${missing}; CI=true, so this fails`);

const JOB = 'petstore';
const KEY_PATTERN = /pst_[0-9A-Za-z]{36}/;
/** Every range in the panels: longer than the whole test, so that each sees all of its scrapes. */
const RATE_INTERVAL = '1m';

describe('the Grafana dashboard, as a file', () => {
  const board = dashboard();
  const panels = dataPanels(board);

  it('is a current dashboard whose data source and instances are variables', () => {
    assert.ok(board.schemaVersion >= 39, `schemaVersion ${board.schemaVersion}`);
    const variables = new Map(board.templating.list.map((variable) => [variable.name, variable]));
    assert.equal(variables.get('DS_PROMETHEUS')?.type, 'datasource');
    assert.equal(variables.get('job')?.type, 'query');
    assert.equal(variables.get('instance')?.type, 'query');
    const templated = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };
    for (const panel of panels) {
      assert.deepEqual(panel.datasource, templated, panel.title);
      for (const target of panel.targets ?? []) assert.deepEqual(target.datasource, templated, panel.title);
    }
  });

  it('has unique panel ids and a query in every panel', () => {
    const ids = board.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).map((panel) => panel.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const panel of panels) assert.ok((panel.targets ?? []).length > 0, `${panel.title}: no query`);
  });

  it('narrows every selector to the chosen job and instances', () => {
    for (const { panel, expr } of panelQueries(board)) {
      assert.deepEqual(
        [...new Set(metricNames(expr))].sort(),
        [...new Set(selectorsOf(expr).map((selector) => selector.metric))].sort(),
        `${panel}: a metric outside a selector`,
      );
      for (const selector of selectorsOf(expr)) {
        const matchers = selector.matchers.map((matcher) => `${matcher.label}${matcher.op}${matcher.value}`);
        assert.ok(matchers.includes('job=~$job'), `${panel}: ${selector.metric} without job=~"$job"`);
        assert.ok(matchers.includes('instance=~$instance'), `${panel}: ${selector.metric} without instance`);
      }
    }
  });
});

describe('the dashboard and the alert rules on a live Prometheus', { skip: missing }, () => {
  let directory: string | undefined;
  let server: ServerProcess | undefined;
  let prometheus: PrometheusProcess | undefined;
  let target = '';
  const statuses: number[] = [];

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-ops-'));
    const database = join(directory, 'petstore.db');
    const metricsPort = await freePort();
    target = `127.0.0.1:${metricsPort}`;
    server = await startServerProcess({
      DATABASE_URL: `sqlite:${database}`,
      DEMO_BOOTSTRAP: 'true',
      METRICS_PORT: String(metricsPort),
      // Short, so that a held write lock fails a request and a usage flush within a second.
      STORAGE_TIMEOUT_MS: '50',
      USAGE_FLUSH_MS: '50',
      // Ban on the first request after a 429.
      BAN_THRESHOLD: '1',
    });
    prometheus = await startPrometheus(directory, target);
    await prometheus.scrapedAfter(Date.now());
    const trafficEnd = await sendTraffic(server, prometheus, database, statuses);
    // /metrics renders at most once a second: a scrape 2 s after the last request and the one before
    // it both have every series, so that each has two samples, as a rate needs.
    await prometheus.scrapedAfter(trafficEnd + 2000);
  });

  after(async () => {
    await prometheus?.stop();
    await server?.kill();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('sent the traffic the panels show', () => {
    for (const status of [200, 201, 304, 401, 404, 429, 503]) assert.ok(statuses.includes(status), `no ${status}`);
  });

  it("runs every panel's query: each parses and returns data", async () => {
    const problems: string[] = [];
    for (const { panel, expr } of panelQueries(dashboard())) {
      const query = interpolate(expr, target);
      assert.doesNotMatch(query, /\$(?!\{1\})/, `${panel}: a variable the test does not fill in`);
      const answer = await prometheus?.answer(query);
      if (answer?.status !== 'success') problems.push(`${panel}: ${query}: ${answer?.error ?? 'no answer'}`);
      else if (answer.data.result.length === 0) problems.push(`${panel}: no data from ${query}`);
    }
    assert.deepEqual(problems, []);
  });

  it('shows the traffic in the panels: status classes, refusals by reason, flushes by result', async () => {
    const labels = async (title: string, label: string): Promise<string[]> => {
      const result = (await prometheus?.query(interpolate(queryOf(title), target))) ?? [];
      return result.map((sample) => sample.metric[label] ?? '').sort();
    };
    const classes = await labels('Requests by route and status class', 'class');
    for (const kind of ['2xx', '3xx', '4xx', '5xx']) assert.ok(classes.includes(kind), `no ${kind}: ${classes.join()}`);
    assert.deepEqual(await labels('429s by reason', 'reason'), ['key_banned', 'rate_limited']);
    const results = await labels('Usage flushes by result', 'result');
    for (const result of ['failed', 'written']) assert.ok(results.includes(result), `no ${result}: ${results.join()}`);
    // A fallback of 0 keeps these panels from showing nothing while all is well: the 503s must count.
    for (const title of ['5xx share of answers', 'Share of answers that were 503 because storage did not answer']) {
      const [share] = (await prometheus?.query(interpolate(queryOf(title), target))) ?? [];
      assert.ok(Number(share?.value[1]) > 0, `${title}: ${JSON.stringify(share)}`);
    }
  });

  it('names only metrics and labels the service exports, in the panels and the alert rules', async () => {
    const exprs = [
      ...panelQueries(dashboard()).map((query) => ({ where: query.panel, expr: query.expr })),
      ...alertRules().map((rule) => ({ where: rule.alert, expr: rule.expr })),
    ];
    const problems: string[] = [];
    for (const { where, expr } of exprs)
      for (const selector of selectorsOf(expr)) problems.push(...(await unknownNames(selector, where)));
    assert.deepEqual(problems, []);
  });

  it('loads ops/alerts.yml: every rule evaluates without error', async () => {
    const names = alertRules().map((rule) => rule.alert);
    let rules: readonly PrometheusRule[] = [];
    await prometheus?.until('every rule evaluated', async () => {
      rules = (await prometheus?.rules()) ?? [];
      return rules.length === names.length && rules.every((rule) => rule.health !== 'unknown');
    });
    assert.deepEqual(rules.map((rule) => rule.name).sort(), [...names].sort());
    for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError ?? ''}`);
  });

  /** Why a selector names a metric, a label or a label value the scraped service does not have. */
  async function unknownNames(selector: Selector, where: string): Promise<string[]> {
    const series = (await prometheus?.series(selector.metric)) ?? [];
    if (series.length === 0) return [`${where}: no series ${selector.metric}`];
    const problems: string[] = [];
    for (const matcher of selector.matchers) {
      const values = new Set(series.map((labels) => labels[matcher.label]));
      if (values.has(undefined) && values.size === 1)
        problems.push(`${where}: ${selector.metric} has no ${matcher.label}`);
      // Equality names a value: one the service gave. Regular expressions are checked by the queries.
      else if (matcher.op === '=' && !values.has(matcher.value))
        problems.push(`${where}: ${selector.metric}{${matcher.label}="${matcher.value}"} never seen`);
    }
    return problems;
  }

  function queryOf(title: string): string {
    const panel = panelQueries(dashboard()).find((query) => query.panel === title);
    assert.ok(panel, `no panel ${title}`);
    return panel.expr;
  }
});

/** Each query of each panel, named by its panel's title (and refId when it has several). */
function panelQueries(board: Dashboard): { panel: string; expr: string }[] {
  return dataPanels(board).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: (panel.targets ?? []).length > 1 ? `${panel.title} (${target.refId})` : panel.title,
      expr: target.expr,
    })),
  );
}

/**
 * The query as Grafana sends it for this job and instance: multi-value variables are regular
 * expressions, their values escaped for PromQL strings (Grafana's Prometheus data source does the same).
 */
function interpolate(expr: string, instance: string): string {
  const escape = (value: string): string => value.replace(/[\\^$*+?.()|[\]{}']/g, '\\\\$&');
  const variables: Record<string, string> = {
    job: escape(JOB),
    instance: escape(instance),
    __rate_interval: RATE_INTERVAL,
    __interval: '1s',
    __range: RATE_INTERVAL,
  };
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (match, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    return variables[name] ?? match;
  });
}

/**
 * Some of every answer the panels count, ending with the demo key banned; `statuses` gets each
 * status answered. Returns when it ended (ms).
 */
async function sendTraffic(
  server: ServerProcess,
  prometheus: PrometheusProcess,
  database: string,
  statuses: number[],
): Promise<number> {
  const key = KEY_PATTERN.exec(server.output())?.[0];
  assert.ok(key, 'the demo key is printed on first start');
  const send = async (path: string, options: HttpRequest = {}): Promise<HttpAnswer> => {
    const answer = await request(server, path, options);
    statuses.push(answer.status);
    return answer;
  };
  await send('/readyz');
  await send('/healthz');
  await send('/v1/pets', { key });
  const created = await send('/v1/pets', { method: 'POST', key, json: { name: 'Rex', categoryId: 1 } });
  assert.equal(created.status, 201, created.text);
  const petPath = `/v1/pets/${created.json<Pet>().id}`;
  const pet = await send(petPath, { key });
  const etag = pet.headers.get('etag');
  assert.ok(etag, 'a pet has an ETag');
  assert.equal((await send(petPath, { key, headers: { 'if-none-match': etag } })).status, 304);
  await send('/v1/no-such-thing', { key });
  await send('/v1/pets');
  // 503s on either side of a scrape, so that their rate is not 0 (the scrape renders anew after 1 s).
  await storageLocked(send, database, key);
  await prometheus.scrapedAfter(Date.now() + 1000);
  await storageLocked(send, database, key);
  // The free plan's 60 a minute, a 429, and with BAN_THRESHOLD=1 the next request begins a ban. A
  // minute may end on the way and give a fresh window: keep going until the ban.
  for (let i = 0; i < 300; i += 1) {
    const answer = await send('/v1/pets', { key });
    if (answer.status === 429 && answer.json<ErrorBody>().code === 'key_banned') return Date.now();
  }
  assert.fail('the demo key was never banned');
}

/** A creation refused 503, and usage flushes that find storage locked: failed, each of them. */
async function storageLocked(
  send: (path: string, options?: HttpRequest) => Promise<HttpAnswer>,
  database: string,
  key: string,
): Promise<void> {
  const locker = await holdWriteLock(database, 800);
  const exited = once(locker, 'exit');
  try {
    const refused = await send('/v1/pets', { method: 'POST', key, json: { name: 'Locked out', categoryId: 1 } });
    assert.equal(refused.status, 503, refused.text);
    // New counts for the tally, whose flushes (every 50 ms) meanwhile find storage locked.
    for (let i = 0; i < 6; i += 1) {
      await send('/v1/pets', { key });
      await sleep(60);
    }
  } finally {
    await exited;
  }
}

interface PrometheusSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

interface PrometheusAnswer {
  readonly status: 'success' | 'error';
  readonly error?: string;
  readonly data: { readonly result: readonly PrometheusSample[] };
}

interface PrometheusRule {
  readonly name: string;
  readonly health: 'ok' | 'err' | 'unknown';
  readonly lastError?: string;
}

interface PrometheusProcess {
  /** The whole answer of /api/v1/query, errors included. */
  answer(query: string): Promise<PrometheusAnswer>;
  /** The samples of an instant query, which must succeed. */
  query(query: string): Promise<readonly PrometheusSample[]>;
  /** The label sets of every series of a metric. */
  series(metric: string): Promise<readonly Readonly<Record<string, string | undefined>>[]>;
  rules(): Promise<readonly PrometheusRule[]>;
  /** Resolves once `condition` holds; polls it, and fails after 15 s naming `what`. */
  until(what: string, condition: () => Promise<boolean>): Promise<void>;
  /** Resolves once the server has been scraped after `time` (ms since the epoch). */
  scrapedAfter(time: number): Promise<void>;
  stop(): Promise<void>;
}

/** Debian's Prometheus on a free port, its data in `directory`, scraping `target` every second. */
async function startPrometheus(directory: string, target: string): Promise<PrometheusProcess> {
  const config = join(directory, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - ${JSON.stringify(ALERTS_FILE)}`,
      'scrape_configs:',
      `  - job_name: ${JOB}`,
      '    static_configs:',
      `      - targets: [${JSON.stringify(target)}]`,
      '',
    ].join('\n'),
  );
  const address = `127.0.0.1:${await freePort()}`;
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(directory, 'tsdb')}`,
      `--web.listen-address=${address}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.once('error', (error) => (log += error.message));
  const exited = new Promise((resolve) => child.once('close', resolve));
  const base = `http://${address}`;
  const get = async <T>(path: string): Promise<T> => (await (await fetch(`${base}${path}`)).json()) as T;

  const prometheus: PrometheusProcess = {
    answer: (query) => get<PrometheusAnswer>(`/api/v1/query?query=${encodeURIComponent(query)}`),
    async query(query) {
      const answer = await prometheus.answer(query);
      assert.equal(answer.status, 'success', `${query}: ${answer.error ?? ''}`);
      return answer.data.result;
    },
    async series(metric) {
      const answer = await get<{ data: Record<string, string>[] }>(
        `/api/v1/series?match[]=${encodeURIComponent(metric)}`,
      );
      return answer.data;
    },
    async rules() {
      const answer = await get<{ data: { groups: { rules: PrometheusRule[] }[] } }>('/api/v1/rules');
      return answer.data.groups.flatMap((group) => group.rules);
    },
    async until(what, condition) {
      const deadline = Date.now() + 15_000;
      while (!(await condition().catch(() => false))) {
        if (child.exitCode !== null) assert.fail(`Prometheus exited waiting for ${what}: ${log}`);
        if (Date.now() > deadline) assert.fail(`Prometheus: no ${what} within 15 s: ${log}`);
        await sleep(100);
      }
    },
    async scrapedAfter(time) {
      await prometheus.until('a scrape', async () => {
        // timestamp() of a bare selector is its sample's time; of any other expression, the query's.
        const up = `up{job="${JOB}"}`;
        const [sample] = await prometheus.query(`timestamp(${up}) and ${up} == 1`);
        return sample !== undefined && Number(sample.value[1]) * 1000 > time;
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
  try {
    await prometheus.until('answer on /-/ready', async () => (await fetch(`${base}/-/ready`)).ok);
  } catch (error) {
    await prometheus.stop();
    throw error;
  }
  return prometheus;
}
