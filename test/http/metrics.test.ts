import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/clock.ts';
import { exportReadiness } from '../../src/http/routes/ops.ts';
import { READINESS_FRESH_MS, ReadinessMonitor } from '../../src/readiness.ts';
import { startOperatorListener, type OperatorListener } from '../support/operator-listener.ts';
import { METRICS_RENDER_INTERVAL_MS } from '../../src/operator/metrics-route.ts';
import { request, type ErrorBody, type HttpRequest, type HttpTarget } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * GET /metrics on the operator listener (docs/operations.md, "Metrics"): Prometheus text without a
 * key, requests by route and status, 429s by reason, and calls to the deprecated
 * GET /v1/pets/{petId} per account; never on the public listener. The app is shared, so each test
 * makes its own accounts and compares scrapes taken before and after. The listener's render
 * interval runs on a hand-moved clock, which each scrape steps past.
 */

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1] as string] = label[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples named `name` whose labels include `labels`. */
function select(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  );
}

function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return select(samples, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}

/** The status of one request, its body read and dropped. */
async function statusOf(app: TestApp, path: string, options: HttpRequest = {}): Promise<number> {
  return (await request(app, path, options)).status;
}

/** The operator listener as a request target: it serves no part of the API. */
function operatorListener(server: OperatorListener): HttpTarget {
  return { url: server.url, servesApi: false };
}

/** Monotonic time of the operator listener, moved by hand. */
let monotonic = 0;
let metricsServer: OperatorListener;

/** A scrape past the render interval: the counts as they are now. */
async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  monotonic += METRICS_RENDER_INTERVAL_MS;
  return scrapeAsIs();
}

async function scrapeAsIs(): Promise<{ text: string; samples: Sample[] }> {
  const response = await request(operatorListener(metricsServer), '/metrics');
  assert.equal(response.status, 200);
  return { text: response.text, samples: parseSamples(response.text) };
}

describe('GET /metrics on the operator listener', () => {
  let app: TestApp;
  let petId: number;

  before(async () => {
    app = await startTestApp();
    metricsServer = await startOperatorListener({
      registry: app.services.metrics.registry,
      port: 0,
      host: '127.0.0.1',
      now: () => monotonic,
    });
    const { key } = await app.newKey();
    const created = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'metrics', categoryId: 1 }),
    });
    assert.equal(created.status, 201, created.text);
    petId = created.json<{ id: number }>().id;
  });
  after(async () => {
    await metricsServer.close();
    await app.close();
  });

  it('is Prometheus text, served without a key', async () => {
    monotonic += METRICS_RENDER_INTERVAL_MS;
    const response = await request(operatorListener(metricsServer), '/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    for (const [name, type] of [
      ['petstore_http_requests_total', 'counter'],
      ['petstore_http_request_duration_seconds', 'histogram'],
      ['petstore_deprecated_calls_total', 'counter'],
      ['petstore_rate_limited_total', 'counter'],
    ]) {
      assert.match(response.text, new RegExp(`^# HELP ${name} \\S`, 'm'), `${name} has HELP`);
      assert.match(response.text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `${name} is a ${type}`);
    }
    assert.ok(parseSamples(response.text).length > 0, 'at least one sample');
  });

  it('says whether each dependency of /readyz answers, probed at the scrape', async () => {
    const { samples } = await scrape();
    const backend = app.services.store.backend;
    assert.deepEqual(
      select(samples, 'petstore_dependency_up', {}).map((sample) => [sample.labels['dependency'], sample.value]),
      [[backend, 1]],
    );
  });

  it('counts a dependency that fails or does not answer in time as down', async () => {
    const registry = new Registry();
    const never = new Promise<void>(() => undefined);
    const readiness = new ReadinessMonitor(
      [
        { name: 'up', check: () => Promise.resolve() },
        { name: 'failing', check: () => Promise.reject(new Error('connection refused')) },
        { name: 'silent', check: () => never },
      ],
      { timeoutMs: 50, clock: systemClock },
    );
    exportReadiness(registry, readiness);
    await readiness.probe();
    const samples = parseSamples(await registry.metrics());
    assert.deepEqual(
      select(samples, 'petstore_dependency_up').map((sample) => [sample.labels['dependency'], sample.value]),
      [
        ['up', 1],
        ['failing', 0],
        ['silent', 0],
      ],
    );
  });

  it('reads the last probe without waiting, and starts the next beside a scrape that finds it old', async () => {
    const registry = new Registry();
    let answering = true;
    let probes = 0;
    let now = 0;
    let answer = (): void => undefined;
    const hanging = new Promise<void>((resolve) => {
      answer = resolve;
    });
    // Far longer than the test: a scrape that waited for the probe would not end before it answers.
    const readiness = new ReadinessMonitor(
      [
        {
          name: 'storage',
          check: () => {
            probes += 1;
            return answering ? Promise.resolve() : hanging;
          },
        },
      ],
      { timeoutMs: 600_000, clock: systemClock, now: () => now },
    );
    exportReadiness(registry, readiness);
    const up = async () =>
      select(parseSamples(await registry.metrics()), 'petstore_dependency_up').map((sample) => sample.value);
    assert.deepEqual(await up(), [], 'no sample before the first probe ends');
    await readiness.probe();
    const before = probes;
    answering = false;
    assert.deepEqual(await up(), [1], 'a fresh reading starts no probe');
    assert.equal(probes, before);
    now += READINESS_FRESH_MS;
    assert.deepEqual(await up(), [1], 'the last reading, while the probe it started hangs');
    assert.equal(probes, before + 1);
    now += READINESS_FRESH_MS;
    assert.deepEqual(await up(), [1]);
    assert.equal(probes, before + 1, 'one probe at a time: the hanging one is shared');
    answer();
    assert.equal((await readiness.probe()).results[0]?.ok, true);
  });

  it('counts calls to the deprecated GET /v1/pets/{petId} per account', async () => {
    const first = await app.newKey();
    const second = await app.newKey({ plan: 'pro' });
    const before = (await scrape()).samples;
    for (const account of [first.account, second.account])
      assert.equal(
        select(before, 'petstore_deprecated_calls_total', { account }).length,
        0,
        'no sample before the first call',
      );
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: first.key }), 200);
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: second.key }), 200);
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: second.key }), 200);
    const { text, samples } = await scrape();
    for (const [account, calls] of [
      [first.account, 1],
      [second.account, 2],
    ] as const) {
      const found = select(samples, 'petstore_deprecated_calls_total', { account });
      assert.equal(found.length, 1, `one sample for ${account}`);
      assert.equal(found[0]?.value, calls, `${calls} deprecated calls by ${account}`);
    }
    assert.doesNotMatch(text, /pst_/, 'keys never appear in metrics');
    // Other operations are not deprecated calls.
    assert.equal(await statusOf(app, '/v1/pets', { key: first.key }), 200);
    assert.equal(total((await scrape()).samples, 'petstore_deprecated_calls_total', { account: first.account }), 1);
  });

  it('counts requests by route and status', async () => {
    const first = await app.newKey();
    const second = await app.newKey({ plan: 'pro' });
    const before = (await scrape()).samples;
    const listOk = { method: 'GET', route: '/v1/pets', status: '200' };
    const listUnauthorized = { method: 'GET', route: '/v1/pets', status: '401' };
    const getPetNotFound = { method: 'GET', route: '/v1/pets/:petId', status: '404' };
    const createBad = { method: 'POST', route: '/v1/pets', status: '400' };
    assert.equal(await statusOf(app, '/v1/pets', { key: first.key }), 200);
    assert.equal(await statusOf(app, '/v1/pets', { key: first.key }), 200);
    assert.equal(await statusOf(app, '/v1/pets'), 401);
    assert.equal(await statusOf(app, '/v1/pets/999999', { key: second.key }), 404);
    const badBody = '{"name":"x","categoryId":1,"id":5}';
    const json = { 'content-type': 'application/json' };
    assert.equal(
      await statusOf(app, '/v1/pets', { key: second.key, method: 'POST', headers: json, body: badBody }),
      400,
    );
    assert.equal(await statusOf(app, '/no/such/path/42', { key: second.key }), 404);
    const afterwards = (await scrape()).samples;
    const delta = (name: string, labels: Record<string, string>): number =>
      total(afterwards, name, labels) - total(before, name, labels);
    assert.equal(delta('petstore_http_requests_total', listOk), 2);
    assert.equal(delta('petstore_http_requests_total', listUnauthorized), 1);
    assert.equal(delta('petstore_http_requests_total', getPetNotFound), 1);
    assert.equal(delta('petstore_http_requests_total', createBad), 1);
    const routes = select(afterwards, 'petstore_http_requests_total').map((sample) => sample.labels.route ?? '');
    assert.ok(routes.includes('/v1/pets/:petId'), `the template is a route label: ${routes.join(', ')}`);
    assert.deepEqual(
      routes.filter((route) => /\/v1\/pets\/\d|no\/such/.test(route)),
      [],
      'routes are templates, not concrete paths (bounded label values)',
    );
    assert.equal(
      delta('petstore_http_request_duration_seconds_count', { method: 'GET', route: '/v1/pets' }),
      3,
      'latency is observed per route',
    );
  });

  it('counts 429s by reason', async () => {
    const limited = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const before = (await scrape()).samples;
    assert.equal(await statusOf(app, '/v1/pets', { key: limited.key }), 200);
    assert.equal(await statusOf(app, '/v1/pets', { key: limited.key }), 429);
    const afterwards = (await scrape()).samples;
    const delta = (name: string, labels: Record<string, string>): number =>
      total(afterwards, name, labels) - total(before, name, labels);
    assert.equal(delta('petstore_rate_limited_total', { reason: 'rate_limited' }), 1, 'a 429 rate_limited is counted');
    assert.equal(delta('petstore_rate_limited_total', { reason: 'key_banned' }), 0);
    assert.equal(
      delta('petstore_http_requests_total', { route: '/v1/pets', status: '429' }),
      1,
      'and appears among the requests by status',
    );
  });
});

describe('the operator listener', () => {
  let app: TestApp;
  let key: string;
  let operator: OperatorListener;
  let now = 0;

  before(async () => {
    app = await startTestApp();
    key = (await app.newKey({ plan: 'business' })).key;
    operator = await startOperatorListener({
      registry: app.services.metrics.registry,
      port: 0,
      host: '127.0.0.1',
      now: () => now,
    });
  });
  after(async () => {
    await operator.close();
    await app.close();
  });

  it('is not served on the public listener: 401 without a key, 404 with one', async () => {
    const anonymous = await request(app, '/metrics');
    assert.equal(anonymous.status, 401, anonymous.text);
    assert.equal(anonymous.json<ErrorBody>().code, 'unauthorized');
    assert.doesNotMatch(anonymous.text, /petstore_/);
    const authenticated = await request(app, '/metrics', { key });
    assert.equal(authenticated.status, 404, authenticated.text);
    assert.deepEqual(authenticated.json<ErrorBody>(), {
      code: 'not_found',
      message: 'no route for GET /metrics',
      status: 404,
    });
  });

  it('answers other paths 404 and other methods 405, with the Error body', async () => {
    const base = operatorListener(operator);
    const other = await request(base, '/v1/pets');
    assert.equal(other.status, 404);
    assert.equal(other.json<ErrorBody>().code, 'not_found');
    const post = await request(base, '/metrics', { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.equal(post.json<ErrorBody>().code, 'method_not_allowed');
  });

  it('renders at most once per interval: scrapes in between share the text', async () => {
    now += METRICS_RENDER_INTERVAL_MS;
    const first = (await request(operatorListener(operator), '/metrics')).text;
    const renders = operator.renders();
    assert.equal((await request(app, '/v1/pets', { key })).status, 200);
    now += METRICS_RENDER_INTERVAL_MS - 1;
    const cached = await Promise.all(
      Array.from({ length: 20 }, async () => (await request(operatorListener(operator), '/metrics')).text),
    );
    assert.ok(
      cached.every((text) => text === first),
      'the same text within the interval',
    );
    assert.equal(operator.renders(), renders, 'no render within the interval');
    now += 1;
    const fresh = (await request(operatorListener(operator), '/metrics')).text;
    assert.notEqual(fresh, first, 'a new render once the interval has passed');
    assert.equal(operator.renders(), renders + 1);
  });
});

describe('a flood of scrapes', () => {
  let app: TestApp;
  let operator: OperatorListener;

  before(async () => {
    app = await startTestApp();
    // Real time here: the point is what a flood costs as it happens.
    operator = await startOperatorListener({ registry: app.services.metrics.registry, port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await operator.close();
    await app.close();
  });

  it('200 concurrent scrapes for a second: one render per second, and the public API keeps answering', async () => {
    const { key } = await app.newKey({ plan: 'business' });
    const started = performance.now();
    const before = operator.renders();
    let scrapes = 0;
    let publicAnswers = 0;
    const flood = (async () => {
      while (performance.now() - started < 1000) {
        const statuses = await Promise.all(
          Array.from({ length: 200 }, async () => {
            return (await request(operatorListener(operator), '/metrics')).status;
          }),
        );
        assert.deepEqual(new Set(statuses), new Set([200]));
        scrapes += statuses.length;
      }
    })();
    const publicApi = (async () => {
      while (performance.now() - started < 1000) {
        assert.equal((await request(app, '/v1/pets', { key })).status, 200);
        publicAnswers += 1;
      }
    })();
    await Promise.all([flood, publicApi]);
    const elapsedSeconds = (performance.now() - started) / 1000;
    const renders = operator.renders() - before;
    assert.ok(scrapes >= 200, `the flood ran: ${scrapes} scrapes`);
    assert.ok(publicAnswers >= 1, 'the public API answered during the flood');
    assert.ok(
      renders <= Math.ceil(elapsedSeconds) + 1,
      `${renders} renders for ${scrapes} scrapes in ${elapsedSeconds.toFixed(2)} s`,
    );
  });
});

describe('METRICS_PORT and METRICS_HOST', () => {
  it('default to 127.0.0.1:9464; off starts no listener; 0 asks for any free port', () => {
    assert.deepEqual(loadConfig({}).metrics, { port: 9464, host: '127.0.0.1' });
    assert.equal(loadConfig({ METRICS_PORT: 'off' }).metrics, undefined);
    assert.deepEqual(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '10.0.0.11' }).metrics, {
      port: 0,
      host: '10.0.0.11',
    });
  });

  for (const [env, pattern] of [
    [{ METRICS_PORT: 'http' }, /^invalid configuration: METRICS_PORT /],
    [{ METRICS_PORT: '70000' }, /^invalid configuration: METRICS_PORT must be 0-65535 or off/],
    [{ METRICS_PORT: '8080' }, /^invalid configuration: METRICS_PORT must differ from PORT/],
    [{ METRICS_PORT: '9000', PORT: '9000', HOST: '0.0.0.0' }, /^invalid configuration: METRICS_PORT must differ/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)} in one line`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) =>
          error instanceof ConfigError && pattern.test(error.message) && !error.message.includes('\n'),
      );
    });
  }

  it('allows the same port number on another address', () => {
    const env = { PORT: '9000', HOST: '10.0.0.11', METRICS_PORT: '9000', METRICS_HOST: '127.0.0.1' };
    assert.deepEqual(loadConfig(env).metrics, { port: 9000, host: '127.0.0.1' });
  });
});
