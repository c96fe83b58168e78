import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Server } from 'node:http';
import { addApiKey, createApp, openDatabase } from '../../bench/express-server.ts';

/** The Express app the benchmark sets the service beside: it must answer what the scenarios send. */
describe('bench Express app', () => {
  let server: Server;
  let base = '';
  const key = 'bench_test_key';
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  before(async () => {
    const db = openDatabase(':memory:');
    addApiKey(db, key, 'test');
    server = createApp(db).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('creates pets, validating their fields, and refuses a missing or unknown key', async () => {
    for (let index = 0; index < 25; index += 1) {
      const body = JSON.stringify({ name: `Pet ${index}`, categoryId: index, status: 'available' });
      const response = await fetch(`${base}/v1/pets`, { method: 'POST', headers, body });
      assert.equal(response.status, 201);
      assert.equal(response.headers.get('location'), `/v1/pets/${index + 1}`);
    }
    for (const body of [
      '{"name":"","categoryId":1}',
      '{"name":"a","categoryId":1.5}',
      '{"name":"a","categoryId":1,"x":1}',
    ]) {
      assert.equal((await fetch(`${base}/v1/pets`, { method: 'POST', headers, body })).status, 400, body);
    }
    assert.equal((await fetch(`${base}/v1/pets`, { method: 'POST', headers, body: '{' })).status, 400);
    assert.equal((await fetch(`${base}/v1/pets/1`)).status, 401);
    assert.equal((await fetch(`${base}/v1/pets/1`, { headers: { authorization: 'Bearer other' } })).status, 401);
  });

  it('reads one pet, and pages through them by id with a Link to the next page', async () => {
    const pet = await fetch(`${base}/v1/pets/3`, { headers });
    assert.deepEqual(await pet.json(), { id: 3, name: 'Pet 2', categoryId: 2, status: 'available' });
    assert.equal((await fetch(`${base}/v1/pets/99`, { headers })).status, 404);
    const seen: number[] = [];
    let next: string | undefined = '/v1/pets?limit=10';
    while (next !== undefined) {
      const page: Response = await fetch(`${base}${next}`, { headers });
      assert.equal(page.status, 200);
      seen.push(...((await page.json()) as { id: number }[]).map(({ id }) => id));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 25 }, (_, index) => index + 1),
    );
  });
});
