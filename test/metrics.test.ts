import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * GET /metrics (decisions.md, "Addresses and documents" and "Deprecation"; README, "Operations"):
 * Prometheus text without a key, requests by route and status, 429s by reason, and calls to the
 * deprecated GET /v1/pets/{petId} per account.
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

async function call(
  app: TestApp,
  path: string,
  key?: string,
  init: { method?: string; body?: string } = {},
): Promise<number> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${app.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body ?? null });
  await response.arrayBuffer();
  return response.status;
}

async function scrape(app: TestApp): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${app.url}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return { text, samples: parseSamples(text) };
}

describe('GET /metrics', () => {
  let app: TestApp;
  let first: { key: string; account: string };
  let second: { key: string; account: string };
  let limited: { key: string; account: string };
  let petId: number;

  before(async () => {
    app = await startTestApp();
    first = await app.newKey();
    second = await app.newKey({ plan: 'pro' });
    limited = await app.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const created = await fetch(`${app.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'metrics', categoryId: 1 }),
    });
    assert.equal(created.status, 201);
    petId = ((await created.json()) as { id: number }).id;
  });
  after(() => app.close());

  it('is Prometheus text, served without a key', async () => {
    const response = await fetch(`${app.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const [name, type] of [
      ['petstore_http_requests_total', 'counter'],
      ['petstore_http_request_duration_seconds', 'histogram'],
      ['petstore_deprecated_calls_total', 'counter'],
      ['petstore_rate_limited_total', 'counter'],
    ]) {
      assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'), `${name} has HELP`);
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), `${name} is a ${type}`);
    }
    parseSamples(text);
  });

  it('counts calls to the deprecated GET /v1/pets/{petId} per account', async () => {
    const before = (await scrape(app)).samples;
    assert.equal(
      select(before, 'petstore_deprecated_calls_total', { account: first.account }).length,
      0,
      'no sample before the first call',
    );
    assert.equal(await call(app, `/v1/pets/${petId}`, first.key), 200);
    assert.equal(await call(app, `/v1/pets/${petId}`, second.key), 200);
    const { text, samples } = await scrape(app);
    for (const account of [first.account, second.account]) {
      const found = select(samples, 'petstore_deprecated_calls_total', { account });
      assert.equal(found.length, 1, `one sample for ${account}`);
      assert.equal(found[0]?.value, 1, `one deprecated call by ${account}`);
    }
    assert.doesNotMatch(text, /pst_/, 'keys never appear in metrics');
    // Other operations are not deprecated calls.
    assert.equal(await call(app, '/v1/pets', first.key), 200);
    assert.equal(total((await scrape(app)).samples, 'petstore_deprecated_calls_total', { account: first.account }), 1);
  });

  it('counts requests by route and status', async () => {
    const before = (await scrape(app)).samples;
    const listOk = { method: 'GET', route: '/v1/pets', status: '200' };
    const listUnauthorized = { method: 'GET', route: '/v1/pets', status: '401' };
    const getPetNotFound = { method: 'GET', route: '/v1/pets/:petId', status: '404' };
    const createBad = { method: 'POST', route: '/v1/pets', status: '400' };
    assert.equal(await call(app, '/v1/pets', first.key), 200);
    assert.equal(await call(app, '/v1/pets', first.key), 200);
    assert.equal(await call(app, '/v1/pets'), 401);
    assert.equal(await call(app, '/v1/pets/999999', second.key), 404);
    assert.equal(
      await call(app, '/v1/pets', second.key, { method: 'POST', body: '{"name":"x","categoryId":1,"id":5}' }),
      400,
    );
    assert.equal(await call(app, '/no/such/path/42', second.key), 404);
    const afterwards = (await scrape(app)).samples;
    const delta = (labels: Record<string, string>): number =>
      total(afterwards, 'petstore_http_requests_total', labels) - total(before, 'petstore_http_requests_total', labels);
    assert.equal(delta(listOk), 2);
    assert.equal(delta(listUnauthorized), 1);
    assert.equal(delta(getPetNotFound), 1);
    assert.equal(delta(createBad), 1);
    assert.ok(
      select(afterwards, 'petstore_http_requests_total').every(
        (sample) => !/\/v1\/pets\/\d|no\/such/.test(sample.labels.route ?? ''),
      ),
      'routes are templates, not concrete paths (bounded label values)',
    );
    assert.ok(
      total(afterwards, 'petstore_http_request_duration_seconds_count', { method: 'GET', route: '/v1/pets' }) >= 3,
      'latency is observed per route',
    );
  });

  it('counts 429s by reason', async () => {
    assert.equal(await call(app, '/v1/pets', limited.key), 200);
    assert.equal(await call(app, '/v1/pets', limited.key), 429);
    const { samples } = await scrape(app);
    assert.ok(
      total(samples, 'petstore_rate_limited_total', { reason: 'rate_limited' }) >= 1,
      'a 429 rate_limited is counted',
    );
    assert.ok(
      total(samples, 'petstore_http_requests_total', { route: '/v1/pets', status: '429' }) >= 1,
      'and appears among the requests by status',
    );
  });
});
