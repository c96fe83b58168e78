import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, type HttpRequest } from './support/http-client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * GET /metrics (README, "Operations"): Prometheus text without a key, requests by route and
 * status, 429s by reason, and calls to the deprecated GET /v1/pets/{petId} per account. The app is
 * shared, so each test makes its own accounts and compares scrapes taken before and after.
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

async function scrape(app: TestApp): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${app.url}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return { text, samples: parseSamples(text) };
}

describe('GET /metrics', () => {
  let app: TestApp;
  let petId: number;

  before(async () => {
    app = await startTestApp();
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
  after(() => app.close());

  it('is Prometheus text, served without a key', async () => {
    const response = await request(app, '/metrics');
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

  it('counts calls to the deprecated GET /v1/pets/{petId} per account', async () => {
    const first = await app.newKey();
    const second = await app.newKey({ plan: 'pro' });
    const before = (await scrape(app)).samples;
    for (const account of [first.account, second.account])
      assert.equal(
        select(before, 'petstore_deprecated_calls_total', { account }).length,
        0,
        'no sample before the first call',
      );
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: first.key }), 200);
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: second.key }), 200);
    assert.equal(await statusOf(app, `/v1/pets/${petId}`, { key: second.key }), 200);
    const { text, samples } = await scrape(app);
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
    assert.equal(total((await scrape(app)).samples, 'petstore_deprecated_calls_total', { account: first.account }), 1);
  });

  it('counts requests by route and status', async () => {
    const first = await app.newKey();
    const second = await app.newKey({ plan: 'pro' });
    const before = (await scrape(app)).samples;
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
    const afterwards = (await scrape(app)).samples;
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
    const before = (await scrape(app)).samples;
    assert.equal(await statusOf(app, '/v1/pets', { key: limited.key }), 200);
    assert.equal(await statusOf(app, '/v1/pets', { key: limited.key }), 429);
    const afterwards = (await scrape(app)).samples;
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
