import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { assertError, request, type HttpAnswer, type Pet } from '../support/http-client.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

const SUNSET = new Date('2030-12-05T00:00:00Z');
const SUNSET_HEADER = 'Thu, 05 Dec 2030 00:00:00 GMT';

function assertDeprecationHeaders(response: HttpAnswer, deprecatedAt: Date): void {
  assert.equal(response.headers.get('deprecation'), `@${Math.floor(deprecatedAt.getTime() / 1000)}`);
  assert.equal(response.headers.get('sunset'), SUNSET_HEADER);
  const link = response.headers.get('link') ?? '';
  const match = /^<([^>]+)>;\s*rel="deprecation"/.exec(link);
  assert.ok(match, `Link rel="deprecation" expected, got ${JSON.stringify(link)}`);
  const target = new URL(match[1] ?? '', 'http://placeholder.invalid');
  assert.match(target.pathname, /^\/docs/, 'the deprecation link points at the API reference');
}

describeEachBackend('GET /v1/pets/{petId}', (backend) => {
  const clock = new ManualClock(new Date('2026-06-01T12:00:00Z'));
  let app: TestApp;
  let key: string;
  let pet: Pet;

  before(async () => {
    app = await startTestApp({ backend, clock });
    ({ key } = await app.newKey({ plan: 'business' }));
    const created = await request(app, '/v1/pets', {
      method: 'POST',
      key,
      json: { name: 'Fido', categoryId: 4, status: 'available' },
    });
    assert.equal(created.status, 201);
    pet = created.json<Pet>();
  });
  after(() => app.close());

  it('returns the pet with 200', async () => {
    const response = await request(app, `/v1/pets/${pet.id}`, { key });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.json<Pet>(), pet);
  });

  for (const id of ['999999', '0', '-1', '9223372036854775807', '-9223372036854775808']) {
    it(`answers 404 not_found for id ${id}`, async () => {
      assertError(await request(app, `/v1/pets/${id}`, { key }), 404, 'not_found');
    });
  }

  it('names the requested id, digit for digit, in the 404 message', async () => {
    for (const id of ['999999', '9223372036854775807', '9007199254740993']) {
      assertError(await request(app, `/v1/pets/${id}`, { key }), 404, 'not_found', id);
    }
  });

  for (const id of [
    'abc',
    '1.5',
    '1e3',
    '0x10',
    '007',
    '%20',
    '9223372036854775808',
    '-9223372036854775809',
    '99999999999999999999',
  ]) {
    it(`answers 400 invalid_path naming petId for ${JSON.stringify(id)}`, async () => {
      assertError(await request(app, `/v1/pets/${id}`, { key }), 400, 'invalid_path', 'petId');
    });
  }

  it('carries Deprecation, Sunset and Link rel="deprecation" on its answers', async () => {
    const deprecatedAt = app.services.config.deprecationDate;
    assert.ok(deprecatedAt <= SUNSET);
    assertDeprecationHeaders(await request(app, `/v1/pets/${pet.id}`, { key }), deprecatedAt);
    assertDeprecationHeaders(await request(app, '/v1/pets/999999', { key }), deprecatedAt);
    // The list, its replacement, is not deprecated.
    const list = await request(app, '/v1/pets', { key });
    assert.equal(list.headers.get('deprecation'), null);
    assert.equal(list.headers.get('sunset'), null);
  });

  it('links to a migration note that points at GET /v1/pets with the status filter', async () => {
    const response = await request(app, `/v1/pets/${pet.id}`, { key });
    const link = /^<([^>]+)>/.exec(response.headers.get('link') ?? '')?.[1] ?? '';
    const { pathname, search } = new URL(link.split('#')[0] ?? '', app.url);
    const page = await request(app, `${pathname}${search}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const document = (await request(app, '/v1/openapi.json')).json<{
      paths: Record<string, Record<string, { deprecated?: boolean; description?: string }>>;
    }>();
    const operation = document.paths['/pets/{petId}']?.['get'];
    assert.equal(operation?.deprecated, true);
    assert.match(operation?.description ?? '', /GET \/v1\/pets\b.*status/s);
  });

  it('answers 410 gone from the sunset instant on, and 200 one millisecond before', async () => {
    try {
      clock.set(SUNSET.getTime() - 1);
      assert.equal((await request(app, `/v1/pets/${pet.id}`, { key })).status, 200);

      clock.set(SUNSET);
      const atSunset = await request(app, `/v1/pets/${pet.id}`, { key });
      assertError(atSunset, 410, 'gone');
      assertDeprecationHeaders(atSunset, app.services.config.deprecationDate);
      assertError(await request(app, '/v1/pets/999999', { key }), 410, 'gone');

      for (const later of ['2030-12-05T00:00:00.001Z', '2031-01-01T00:00:00Z', '2099-01-01T00:00:00Z']) {
        clock.set(new Date(later));
        const body = assertError(await request(app, `/v1/pets/${pet.id}`, { key }), 410, 'gone');
        assert.match(body.message, /GET \/v1\/pets\b/, 'the 410 message names the replacement');
      }
      // The replacement keeps working after the sunset.
      const list = await request(app, '/v1/pets?status=available', { key });
      assert.equal(list.status, 200);
      assert.ok(list.json<Pet[]>().some((candidate) => candidate.id === pet.id));
    } finally {
      clock.set(new Date('2026-06-01T12:00:00Z'));
    }
    assert.equal((await request(app, `/v1/pets/${pet.id}`, { key })).status, 200);
  });
});

describeEachBackend('GET /v1/pets/{petId} with a configured deprecation date', (backend) => {
  it('announces the configured date in the Deprecation header', async () => {
    const app = await startTestApp({ backend, env: { DEPRECATION_DATE: '2027-01-01T00:00:00Z' } });
    try {
      const { key } = await app.newKey();
      const created = await request(app, '/v1/pets', { method: 'POST', key, json: { name: 'Dated', categoryId: 1 } });
      const response = await request(app, `/v1/pets/${created.json<Pet>().id}`, { key });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('deprecation'), `@${Date.UTC(2027, 0, 1) / 1000}`);
      assert.equal(response.headers.get('sunset'), SUNSET_HEADER);
    } finally {
      await app.close();
    }
  });
});
