import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MID } from '../ratelimit/rate-limit-assertions.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request } from '../support/http-client.ts';
import { accountName, adminApiForSuite, namesOf, ok, uniqueName, type Account, type Key } from './admin-calls.ts';

/**
 * The accounts of the admin API (docs/operations.md, "Admin API"): created, found, paged, refused on
 * bad input, and their plan and key limit changed, with the plan's limits applied on the public API.
 * Answers are checked against the admin document, as every admin test's are.
 */

describeEachBackend('the admin API: accounts', (backend) => {
  const { app, admin, newAccount, newKey, everyPage } = adminApiForSuite(backend);

  it('POST /accounts creates an account; GET lists it and shows it with its keys', async () => {
    const name = accountName();
    const created = ok<Account>(
      await admin('/admin/v1/accounts', {
        method: 'POST',
        json: { name, plan: 'enterprise', perMinute: 5, perDay: 50 },
      }),
      201,
    );
    assert.deepEqual(created, {
      name,
      plan: 'enterprise',
      limits: { perMinute: 5, perDay: 50 },
      today: { used: 0, limit: 50 },
      keys: { total: 0, active: 0 },
      lastUsedAt: null,
      createdAt: new Date(MID).toISOString(),
      keyLimit: 20,
    });
    const { key, id } = await newKey(name);
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    const listed = ok<{ accounts: Account[] }>(await admin(`/admin/v1/accounts?q=${name}`)).accounts;
    const mine = listed.find((account) => account.name === name);
    assert.ok(mine, `${name} is listed`);
    assert.deepEqual(mine.keys, { total: 1, active: 1 });
    assert.deepEqual(mine.today, { used: 2, limit: 50 }, "today's use, read from the limiter");
    const shown = ok<Account & { keys: Key[] }>(await admin(`/admin/v1/accounts/${name}`));
    assert.deepEqual(
      shown.keys.map((listedKey) => [listedKey.id, listedKey.state]),
      [[id, 'active']],
    );
    assert.deepEqual(shown.today, { used: 2, limit: 50 });
    assertError(await admin('/admin/v1/accounts/nobody-here'), 404, 'not_found', 'nobody-here');
  });

  it('GET /accounts: q finds names by a substring in any case, wildcards as themselves', async () => {
    const stem = uniqueName('Find');
    const names = ['alpha', 'ALPHA.two', 'a_b', 'axb', 'x.y'].map((end) => `${stem}-${end}`);
    for (const name of names)
      ok(await admin('/admin/v1/accounts', { method: 'POST', json: { name, plan: 'free' } }), 201);
    const found = async (q: string): Promise<string[]> =>
      namesOf(ok<{ accounts: Account[] }>(await admin(`/admin/v1/accounts?q=${encodeURIComponent(q)}`)).accounts);
    assert.deepEqual(await found(stem.toLowerCase()), names, 'in any case, oldest first');
    assert.deepEqual(await found(`${stem}-Alpha`), names.slice(0, 2));
    assert.deepEqual(await found(`${stem}-a_b`), [`${stem}-a_b`], '_ is no wildcard');
    assert.deepEqual(await found(`${stem}-a%b`), [], '% is none either');
    assert.deepEqual(await found(`${stem}-a\\_b`), [], '\\ escapes nothing');
    assert.deepEqual(await found(`${stem}-a*`), []);
    assert.deepEqual(await found(`${stem}-x.y`), [`${stem}-x.y`]);
    const all = ok<{ accounts: Account[] }>(await admin('/admin/v1/accounts?q=')).accounts;
    assert.ok(all.length >= names.length, 'an empty q finds every account');
    assertError(await admin(`/admin/v1/accounts?q=${'x'.repeat(65)}`), 400, 'invalid_query', "'q'", '64');
    assertError(await admin('/admin/v1/accounts?q=a&q=b'), 400, 'invalid_query', "'q'");
  });

  it('GET /accounts: limit and cursor page through them, oldest first, without a repeat or a gap', async () => {
    const stem = uniqueName('page');
    const create = async (count: number): Promise<string[]> => {
      const made: string[] = [];
      for (let index = 0; index < count; index += 1) {
        const name = `${stem}-${String(index).padStart(2, '0')}-${Math.random().toString(36).slice(2, 6)}`;
        ok(await admin('/admin/v1/accounts', { method: 'POST', json: { name, plan: 'free' } }), 201);
        made.push(name);
      }
      return made;
    };
    const names = await create(51);
    const byDefault = await everyPage<Account>(`/admin/v1/accounts?q=${stem}`, 'accounts');
    assert.deepEqual(
      byDefault.pages.map((page) => page.length),
      [50, 1],
      'a page holds 50 by default',
    );
    assert.deepEqual(namesOf(byDefault.pages.flat()), names);

    const bySeventeens = await everyPage<Account>(`/admin/v1/accounts?q=${stem}&limit=17`, 'accounts');
    assert.deepEqual(
      bySeventeens.pages.map((page) => page.length),
      [17, 17, 17],
      'no empty page after a full last one',
    );
    assert.deepEqual(namesOf(bySeventeens.pages.flat()), names);
    assert.equal(new Set(bySeventeens.cursors).size, 2);

    // A cursor stays good, with any limit: an account created after it was given comes on a later page.
    const [later] = await create(1);
    const cursor = bySeventeens.cursors[1];
    const rest = ok<{ accounts: Account[]; nextCursor: string | null }>(
      await admin(`/admin/v1/accounts?q=${stem}&limit=18&cursor=${cursor}`),
    );
    assert.deepEqual(namesOf(rest.accounts), [...names.slice(34), later]);
    assert.equal(rest.nextCursor, null);
    ok(await admin('/admin/v1/accounts?limit=200'), 200);

    const keysCursor = Buffer.from('k1.1.key_a').toString('base64url');
    for (const bad of ['nope', `${cursor}~`, keysCursor, Buffer.from('a1.0').toString('base64url'), '%E2%80']) {
      assertError(await admin(`/admin/v1/accounts?cursor=${bad}`), 400, 'invalid_query', "'cursor'");
    }
    for (const limit of ['0', '201', 'ten', '1.5']) {
      assertError(await admin(`/admin/v1/accounts?limit=${limit}`), 400, 'invalid_query', "'limit'");
    }
  });

  it('POST /accounts refuses bad input with 400 and a taken name with 409', async () => {
    const taken = await newAccount();
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ plan: 'free' }, 'name'],
      [{ name: accountName() }, 'plan'],
      [{ name: accountName(), plan: 'gold' }, 'plan'],
      [{ name: accountName(), plan: 'free', perMinute: 5, perDay: 50 }, 'enterprise'],
      [{ name: accountName(), plan: 'enterprise', perMinute: 5 }, 'perDay'],
      [{ name: accountName(), plan: 'enterprise', perMinute: 0, perDay: 5 }, 'perMinute'],
      [{ name: 'has space', plan: 'free' }, 'account name'],
      [{ name: accountName(), plan: 'free', owner: 'x' }, 'owner'],
    ];
    for (const [body, mention] of cases) {
      assertError(await admin('/admin/v1/accounts', { method: 'POST', json: body }), 400, 'invalid_body', mention);
    }
    assertError(await admin('/admin/v1/accounts', { method: 'POST', json: '{"name":' }), 400, 'invalid_json');
    assertError(await admin('/admin/v1/accounts', { method: 'POST' }), 400, 'invalid_body', 'required');
    const conflict = await admin('/admin/v1/accounts', { method: 'POST', json: { name: taken, plan: 'pro' } });
    assertError(conflict, 409, 'conflict', taken);
  });

  it('PUT /accounts/{name}/plan changes the plan and the limits the public API applies', async () => {
    const name = await newAccount();
    const { key } = await newKey(name);
    const changed = ok<Account>(
      await admin(`/admin/v1/accounts/${name}/plan`, { method: 'PUT', json: { plan: 'pro' } }),
    );
    assert.equal(changed.plan, 'pro');
    assert.deepEqual(changed.limits, { perMinute: 300, perDay: 10_000 });
    assert.deepEqual(changed.keys, { total: 1, active: 1 });
    assertError(
      await admin(`/admin/v1/accounts/${name}/plan`, { method: 'PUT', json: { plan: 'enterprise' } }),
      400,
      'invalid_body',
      'perMinute',
    );
    assertError(
      await admin('/admin/v1/accounts/nobody-here/plan', { method: 'PUT', json: { plan: 'pro' } }),
      404,
      'not_found',
    );
    // The public API applies it once the key's cached answer is older than KEY_CACHE_TTL_MS (1 s).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const answer = await request(app.publicApp, '/v1/pets', { key });
    assert.match(answer.headers.get('ratelimit-policy') ?? '', /"minute";q=300;/);
  });

  it('PUT /accounts/{name}/key-limit sets how many active keys an account may hold, from 1 to 10000', async () => {
    const name = await newAccount();
    const path = `/admin/v1/accounts/${name}/key-limit`;
    const changed = ok<Account>(await admin(path, { method: 'PUT', json: { keyLimit: 3 } }));
    assert.equal(changed.keyLimit, 3);
    assert.equal(ok<Account>(await admin(`/admin/v1/accounts/${name}`)).keyLimit, 3);
    for (const keyLimit of [0, 10_001, 2.5, '3'])
      assertError(await admin(path, { method: 'PUT', json: { keyLimit } }), 400, 'invalid_body', "'keyLimit'");
    assertError(
      await admin('/admin/v1/accounts/nobody-here/key-limit', { method: 'PUT', json: { keyLimit: 3 } }),
      404,
      'not_found',
    );
  });
});
