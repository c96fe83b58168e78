import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer, type HttpTarget, type Pet } from '../support/http-client.ts';
import { appForSuite } from '../support/suite-app.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

type Reviver = (this: unknown, key: string, value: unknown) => unknown;

/** Parses pets keeping categoryId exactly, as the source digits (JSON.parse alone rounds past 2^53). */
function exactPets(text: string): Array<{ id: number; categoryId: string }> {
  const reviver = function (this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
    return key === 'categoryId' && context?.source !== undefined ? context.source : value;
  };
  const parsed = JSON.parse(text, reviver as Reviver) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ id: number; categoryId: string }>;
}

/** Every pet, following next links. */
async function allPets(app: HttpTarget, key: string, query = ''): Promise<{ pets: Pet[]; texts: string[] }> {
  const pets: Pet[] = [];
  const texts: string[] = [];
  let path: string | undefined = `/v1/pets?limit=100${query}`;
  while (path !== undefined) {
    const page = await request(app, path, { key });
    assert.equal(page.status, 200, page.text);
    pets.push(...page.json<Pet[]>());
    texts.push(page.text);
    const link = page.headers.get('link');
    path = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
  }
  return { pets, texts };
}

/** POST /v1/pets with a JSON body: an object is encoded, a string is sent as is (malformed on purpose). */
function postPet(app: HttpTarget, key: string, json: unknown, headers?: Record<string, string>): Promise<HttpAnswer> {
  return request(app, '/v1/pets', { method: 'POST', key, json, headers });
}

describeEachBackend('POST /v1/pets', (backend) => {
  const app = appForSuite({ backend });
  let key: string;
  before(async () => ({ key } = await app.newKey({ plan: 'business' })));

  it('answers 201 with the pet and a Location that serves it', async () => {
    const response = await postPet(app, key, { name: 'Rex', categoryId: 3, status: 'pending' });
    assert.equal(response.status, 201, response.text);
    const pet = response.json<Pet>();
    assert.ok(Number.isSafeInteger(pet.id) && pet.id > 0);
    assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 3, status: 'pending' });
    const location = response.headers.get('location');
    assert.ok(location, 'Location header');
    const locationUrl = new URL(location, app.url);
    assert.equal(locationUrl.pathname, `/v1/pets/${pet.id}`);
    const fetched = await request(app, locationUrl.pathname, { key });
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.json<Pet>(), pet);
  });

  it('assigns increasing ids', async () => {
    const first = (await postPet(app, key, { name: 'a', categoryId: 1 })).json<Pet>();
    const second = (await postPet(app, key, { name: 'b', categoryId: 1 })).json<Pet>();
    assert.ok(second.id > first.id);
  });

  it('leaves status absent when omitted, and no status filter matches the pet', async () => {
    const response = await postPet(app, key, { name: 'NoStatus', categoryId: 11 });
    assert.equal(response.status, 201, response.text);
    assert.doesNotMatch(response.text, /status/, 'no status field, not even null');
    const pet = response.json<Pet>();
    assert.deepEqual(Object.keys(pet).sort(), ['categoryId', 'id', 'name']);
    const fetched = await request(app, `/v1/pets/${pet.id}`, { key });
    assert.doesNotMatch(fetched.text, /status/);
    const listed = (await allPets(app, key)).pets.find((candidate) => candidate.id === pet.id);
    assert.deepEqual(listed, { id: pet.id, name: 'NoStatus', categoryId: 11 });
    for (const status of ['available', 'pending', 'sold']) {
      const filtered = await allPets(app, key, `&status=${status}`);
      assert.ok(
        !filtered.pets.some((candidate) => candidate.id === pet.id),
        `status=${status} must not match a pet without status`,
      );
      assert.ok(filtered.pets.every((candidate) => candidate.status === status));
    }
  });

  it('accepts each status value and names of 1 and 200 characters', async () => {
    for (const status of ['available', 'pending', 'sold'] as const) {
      const response = await postPet(app, key, { name: `s-${status}`, categoryId: 1, status });
      assert.equal(response.status, 201, response.text);
      assert.equal(response.json<Pet>().status, status);
    }
    for (const name of ['x', 'y'.repeat(200), 'Émile 🐕 the dog', 'a "quoted" \\ name']) {
      const response = await postPet(app, key, { name, categoryId: 1 });
      assert.equal(response.status, 201, response.text);
      assert.equal(response.json<Pet>().name, name);
    }
  });

  const invalidBodies: Array<[label: string, body: string, field: string]> = [
    ['missing name', '{"categoryId":1}', 'name'],
    ['missing categoryId', '{"name":"x"}', 'categoryId'],
    ['an id', '{"id":5,"name":"x","categoryId":1}', 'id'],
    ['an unknown field', '{"name":"x","categoryId":1,"color":"red"}', 'color'],
    ['a __proto__ field', '{"__proto__":{"isAdmin":true},"name":"x","categoryId":1}', '__proto__'],
    ['a numeric name', '{"name":5,"categoryId":1}', 'name'],
    ['a null name', '{"name":null,"categoryId":1}', 'name'],
    ['an array name', '{"name":["x"],"categoryId":1}', 'name'],
    ['a string categoryId', '{"name":"x","categoryId":"1"}', 'categoryId'],
    ['a fractional categoryId', '{"name":"x","categoryId":1.5}', 'categoryId'],
    ['a boolean categoryId', '{"name":"x","categoryId":true}', 'categoryId'],
    ['a null categoryId', '{"name":"x","categoryId":null}', 'categoryId'],
    ['an empty name', '{"name":"","categoryId":1}', 'name'],
    ['a name of 201 characters', JSON.stringify({ name: 'n'.repeat(201), categoryId: 1 }), 'name'],
    ['a name with U+0001', JSON.stringify({ name: 'a\u0001b', categoryId: 1 }), 'name'],
    ['a name with a newline', JSON.stringify({ name: 'a\nb', categoryId: 1 }), 'name'],
    ['a name with a tab', JSON.stringify({ name: 'a\tb', categoryId: 1 }), 'name'],
    ['a name with NUL', JSON.stringify({ name: 'a\u0000b', categoryId: 1 }), 'name'],
    ['a name with DEL', JSON.stringify({ name: 'a\u007fb', categoryId: 1 }), 'name'],
    ['a name with a C1 control', JSON.stringify({ name: 'a\u0085b', categoryId: 1 }), 'name'],
    ['a status not in the enum', '{"name":"x","categoryId":1,"status":"lost"}', 'status'],
    ['a status in capitals', '{"name":"x","categoryId":1,"status":"SOLD"}', 'status'],
    ['a null status', '{"name":"x","categoryId":1,"status":null}', 'status'],
    ['a numeric status', '{"name":"x","categoryId":1,"status":1}', 'status'],
    ['categoryId 2^63', '{"name":"x","categoryId":9223372036854775808}', 'categoryId'],
    ['categoryId below -2^63', '{"name":"x","categoryId":-9223372036854775809}', 'categoryId'],
    ['categoryId 1e30', '{"name":"x","categoryId":1e30}', 'categoryId'],
    ['categoryId 1e300', '{"name":"x","categoryId":1e300}', 'categoryId'],
  ];
  for (const [label, body, field] of invalidBodies) {
    it(`refuses a body with ${label} with 400 invalid_body naming '${field}'`, async () => {
      assertError(await postPet(app, key, body), 400, 'invalid_body', `'${field}'`);
    });
  }

  for (const [label, body] of [
    ['an array', '[]'],
    ['an array of a valid pet', '[{"name":"x","categoryId":1}]'],
    ['null', 'null'],
    ['a string', '"pet"'],
    ['a number', '42'],
    ['true', 'true'],
  ] as const) {
    it(`refuses ${label} as body with 400 invalid_body`, async () => {
      assertError(await postPet(app, key, body), 400, 'invalid_body', 'object');
    });
  }

  it('creates no pet for any refused body', async () => {
    const before = (await allPets(app, key)).pets.length;
    for (const [, body] of invalidBodies) assert.equal((await postPet(app, key, body)).status, 400);
    assert.equal((await allPets(app, key)).pets.length, before);
  });

  it('keeps categoryId exactly, digit for digit, beyond 2^53 and at the int64 bounds', async () => {
    for (const digits of [
      '9007199254740993',
      '9223372036854775807',
      '-9223372036854775808',
      '-9007199254740993',
      '0',
      '-1',
      '9007199254740991',
    ]) {
      const response = await postPet(app, key, `{"name":"exact-${digits}","categoryId":${digits}}`);
      assert.equal(response.status, 201, response.text);
      assert.ok(response.text.includes(`"categoryId":${digits}`), `201 body ${response.text} must carry ${digits}`);
      const [created] = exactPets(response.text);
      assert.ok(created);
      assert.equal(created.categoryId, digits);

      const one = await request(app, `/v1/pets/${created.id}`, { key });
      assert.equal(one.status, 200);
      assert.equal(exactPets(one.text)[0]?.categoryId, digits, `GET one: ${one.text}`);

      const { texts } = await allPets(app, key);
      const listed = texts.flatMap(exactPets).find((pet) => pet.id === created.id);
      assert.equal(listed?.categoryId, digits, 'GET list keeps the digits');
    }
    // The check above is meaningful: JSON.parse would have changed these digits.
    assert.notEqual(String(JSON.parse('9007199254740993')), '9007199254740993');
  });

  for (const [label, escaped] of [
    ['a lone high surrogate', '\\ud800x'],
    ['a lone low surrogate', 'x\\udc00'],
    ['a low surrogate before a high one', '\\udc00\\ud800'],
  ] as const) {
    it(`refuses a name with ${label} (not well-formed Unicode) with 400 invalid_body naming 'name'`, async () => {
      const response = await postPet(app, key, `{"name":"${escaped}","categoryId":1}`);
      const error = assertError(response, 400, 'invalid_body');
      assert.equal(
        error.message,
        "field 'name' must be a string of 1 to 200 characters without control characters or lone surrogates" +
          ` (got "${escaped}")`,
      );
    });
  }

  it('accepts a name with a surrogate pair (a character beyond the BMP) and keeps it exactly', async () => {
    const response = await postPet(app, key, '{"name":"\\ud83d\\udc15 dog","categoryId":1}');
    assert.equal(response.status, 201, response.text);
    assert.equal(response.json<Pet>().name, '\u{1F415} dog');
    const fetched = await request(app, `/v1/pets/${response.json<Pet>().id}`, { key });
    assert.equal(fetched.json<Pet>().name, '\u{1F415} dog');
  });

  it('refuses a body that is not valid UTF-8 with 400 invalid_json', async () => {
    const body = Buffer.concat([
      Buffer.from('{"name":"'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('","categoryId":1}'),
    ]);
    const response = await request(app, '/v1/pets', {
      method: 'POST',
      key: (await app.newKey()).key,
      headers: { 'content-type': 'application/json' },
      body,
    });
    assertError(response, 400, 'invalid_json');
  });

  for (const [label, body] of [
    ['an unterminated object', '{"name":"x","categoryId":1'],
    ['a bare word', '{bad'],
    ['a trailing comma', '{"name":"x","categoryId":1,}'],
    ['single quotes', "{'name':'x','categoryId':1}"],
    ['NaN', '{"name":"x","categoryId":NaN}'],
    ['two documents', '{"name":"x","categoryId":1}{"name":"y","categoryId":2}'],
  ] as const) {
    it(`refuses malformed JSON (${label}) with 400 invalid_json`, async () => {
      assertError(await postPet(app, key, body), 400, 'invalid_json');
    });
  }

  it('refuses an empty or blank body sent as application/json with 400 invalid_json', async () => {
    assertError(await postPet(app, key, ''), 400, 'invalid_json');
    assertError(await postPet(app, key, '  \n '), 400, 'invalid_json');
  });

  it('accepts application/json with parameters and in any case', async () => {
    for (const contentType of [
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/json;charset=UTF-8',
    ]) {
      const response = await postPet(app, key, { name: 'ct', categoryId: 1 }, { 'content-type': contentType });
      assert.equal(response.status, 201, `${contentType}: ${response.text}`);
    }
  });

  it('refuses a body that is not application/json with 415 unsupported_media_type', async () => {
    const body = JSON.stringify({ name: 'x', categoryId: 1 });
    for (const contentType of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/jsonx',
      'text/json',
    ]) {
      assertError(await postPet(app, key, body, { 'content-type': contentType }), 415, 'unsupported_media_type');
    }
    // No Content-Type at all (a binary body makes fetch send none).
    const response = await request(app, '/v1/pets', {
      method: 'POST',
      key: (await app.newKey()).key,
      body: new TextEncoder().encode(body),
    });
    assertError(response, 415, 'unsupported_media_type');
  });

  it('refuses a body over 16 KiB with 413 payload_too_large and accepts exactly 16 KiB', async () => {
    const exact = JSON.stringify({ name: 'big', categoryId: 1 }).padEnd(16 * 1024, ' ');
    assert.equal(Buffer.byteLength(exact), 16384);
    assert.equal((await postPet(app, key, exact)).status, 201);
    assertError(await postPet(app, key, `${exact} `), 413, 'payload_too_large');
    assertError(
      await postPet(app, key, JSON.stringify({ name: 'big', categoryId: 1, pad: 'x'.repeat(100_000) })),
      413,
      'payload_too_large',
    );
  });

  it('refuses a chunked body (no Content-Length) over 16 KiB with 413', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(4096));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 10) {
          controller.enqueue(new TextEncoder().encode('{"name":"x","categoryId":1}'));
          controller.close();
          return;
        }
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const response = await request(app, '/v1/pets', {
      method: 'POST',
      key: (await app.newKey()).key,
      headers: { 'content-type': 'application/json' },
      body: stream,
    });
    assertError(response, 413, 'payload_too_large');
  });
});

describeEachBackend('POST /v1/pets with Idempotency-Key', (backend) => {
  const app = appForSuite({ backend });

  async function countNamed(key: string, name: string): Promise<number> {
    return (await allPets(app, key)).pets.filter((pet) => pet.name === name).length;
  }

  it('returns the first response again for the same key and body, creating no second pet', async () => {
    const { key } = await app.newKey();
    const name = `idem-${randomUUID()}`;
    const headers = { 'idempotency-key': randomUUID() };
    const first = await postPet(app, key, { name, categoryId: 5, status: 'sold' }, headers);
    assert.equal(first.status, 201, first.text);
    const second = await postPet(app, key, { name, categoryId: 5, status: 'sold' }, headers);
    assert.equal(second.status, 201);
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('location'), first.headers.get('location'));
    // Same JSON value written differently is the same request.
    const reordered = await postPet(
      app,
      key,
      `{ "status": "sold", "categoryId": 5, "name": ${JSON.stringify(name)} }`,
      headers,
    );
    assert.equal(reordered.status, 201);
    assert.equal(reordered.text, first.text);
    assert.equal(await countNamed(key, name), 1);
  });

  it('replays a large categoryId with its exact digits', async () => {
    const { key } = await app.newKey();
    const headers = { 'idempotency-key': randomUUID() };
    const body = '{"name":"idem-big","categoryId":-9223372036854775808}';
    const first = await postPet(app, key, body, headers);
    const second = await postPet(app, key, body, headers);
    assert.equal(first.status, 201);
    assert.equal(second.text, first.text);
    assert.ok(second.text.includes('"categoryId":-9223372036854775808'));
  });

  it('refuses the same key with another body with 422 idempotency_conflict, and still replays the first', async () => {
    const { key } = await app.newKey();
    const name = `idem-${randomUUID()}`;
    const headers = { 'idempotency-key': `key-${randomUUID()}` };
    const first = await postPet(app, key, { name, categoryId: 1 }, headers);
    assert.equal(first.status, 201);
    for (const other of [
      { name, categoryId: 2 },
      { name: `${name}-2`, categoryId: 1 },
      { name, categoryId: 1, status: 'available' },
    ]) {
      assertError(await postPet(app, key, other, headers), 422, 'idempotency_conflict');
    }
    const again = await postPet(app, key, { name, categoryId: 1 }, headers);
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(await countNamed(key, name), 1);
    assert.equal(await countNamed(key, `${name}-2`), 0);
  });

  it('scopes keys to the account: another account with the same key gets its own pet', async () => {
    const alice = (await app.newKey()).key;
    const bob = (await app.newKey()).key;
    const name = `idem-${randomUUID()}`;
    const headers = { 'idempotency-key': `shared-${randomUUID()}` };
    const fromAlice = await postPet(app, alice, { name, categoryId: 1 }, headers);
    const fromBob = await postPet(app, bob, { name, categoryId: 1 }, headers);
    assert.equal(fromAlice.status, 201);
    assert.equal(fromBob.status, 201);
    assert.notEqual(fromBob.json<Pet>().id, fromAlice.json<Pet>().id);
    assert.equal(fromBob.headers.get('idempotent-replayed'), null);
    // A different body under the same key is no conflict across accounts either.
    const bobOther = await postPet(app, bob, { name, categoryId: 2 }, { 'idempotency-key': `other-${randomUUID()}` });
    assert.equal(bobOther.status, 201);
    assert.equal(await countNamed(alice, name), 3);
  });

  it('shares the key across keys of the same account', async () => {
    const first = await app.newKey();
    const second = await app.services.accounts.createKey(first.account);
    const name = `idem-${randomUUID()}`;
    const headers = { 'idempotency-key': randomUUID() };
    const json = { name, categoryId: 1 };
    const one = await postPet(app, first.key, json, headers);
    const two = await postPet(app, second.key, json, headers);
    assert.equal(two.status, 201);
    assert.equal(two.text, one.text);
  });

  it('the same key and body sent concurrently: one pet, the other requests wait and replay it', async () => {
    const { key } = await app.newKey({ plan: 'business' });
    const name = `idem-${randomUUID()}`;
    const headers = { 'idempotency-key': randomUUID() };
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => postPet(app, key, { name, categoryId: 1 }, headers)),
    );
    assert.deepEqual(
      responses.map((response) => response.status),
      responses.map(() => 201),
    );
    const first = responses.filter((response) => response.headers.get('idempotent-replayed') === null);
    assert.equal(first.length, 1, 'one creation, nine replays');
    assert.equal(new Set(responses.map((response) => response.text)).size, 1, 'every 201 is the same pet');
    assert.equal(await countNamed(key, name), 1);
  });

  it('refuses a malformed Idempotency-Key with 400 naming the header', async () => {
    const { key } = await app.newKey();
    for (const malformed of ['has space', 'x'.repeat(256), 'tab\there']) {
      assertError(
        await postPet(app, key, { name: 'x', categoryId: 1 }, { 'idempotency-key': malformed }),
        400,
        'invalid_body',
        'idempotency-key',
      );
    }
  });
});

describe('POST /v1/pets when storage does not confirm the creation', () => {
  const timeoutMs = 300;
  let directory: string;
  let app: TestApp;
  let key: string;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-unconfirmed-'));
    const env = { DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}`, STORAGE_TIMEOUT_MS: String(timeoutMs) };
    app = await startTestApp({ env });
    ({ key } = await app.newKey({ plan: 'business' }));
  });
  after(async () => {
    await app.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** Another process holds the write lock of the SQLite file until the returned function is called. */
  async function lockStorage(): Promise<() => Promise<void>> {
    const script = `
      const { DatabaseSync } = require('node:sqlite');
      const db = new DatabaseSync(${JSON.stringify(join(directory, 'petstore.db'))});
      db.exec('BEGIN IMMEDIATE');
      process.stdout.write('locked\\n');
      process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });`;
    const child = spawn(process.execPath, ['--no-warnings', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    await once(child.stdout, 'data');
    return async () => {
      const exited = once(child, 'exit');
      child.stdin.end('release\n');
      await exited;
    };
  }

  it('says the pet may have been created, and that a retry is safe with an Idempotency-Key', async () => {
    const release = await lockStorage();
    let plain: HttpAnswer;
    let keyed: HttpAnswer;
    try {
      [plain, keyed] = await Promise.all([
        postPet(app, key, { name: 'Unconfirmed', categoryId: 1 }),
        postPet(app, key, { name: 'Unconfirmed', categoryId: 1 }, { 'idempotency-key': randomUUID() }),
      ]);
    } finally {
      await release();
    }
    const withoutKey = assertError(plain, 503, 'service_unavailable', 'may have been created');
    assert.match(withoutKey.message, /Send an Idempotency-Key with every creation: a retry with the same key is safe/);
    const withKey = assertError(keyed, 503, 'service_unavailable', 'may have been created');
    assert.match(withKey.message, /retrying with the same Idempotency-Key and body is safe/);
  });
});
