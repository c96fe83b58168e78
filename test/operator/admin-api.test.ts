import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { driveToBan, MID } from '../ratelimit/rate-limit-assertions.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import { ManualClock } from '../support/manual-clock.ts';
import {
  assertMatchesDocument,
  loadContract,
  pathTemplateOf,
  type OpenApiDocument,
} from '../support/openapi-contract.ts';
import {
  LEAP_DAY,
  NONEXISTENT_INSTANTS,
  PAST_90_DAYS_ONCE_WIDENED,
  WIDENED_TO_90_DAYS,
} from '../support/usage-ranges.ts';
import { startOperatorTestApp, type OperatorTestApp } from './operator-app.ts';

/**
 * The admin API (docs/operations.md, "Admin API") through the operator listener, over the same
 * services as the public listener: each operation's answer and a refusal of bad input, and its
 * effects on the public API (a key made here works there; a revoked one is refused at once; a
 * lifted ban ends). `request()` checks every answer of an admin operation against the document
 * the listener serves at /admin/v1/openapi.json (test/support/openapi-contract.ts).
 */

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

interface Key {
  readonly id: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  readonly lastUsedAt: string | null;
  readonly bannedUntil: string | null;
  readonly scopes: readonly string[];
  readonly state: 'active' | 'revoked' | 'expired' | 'banned';
  readonly name: string | null;
  readonly createdBy: { readonly kind: string; readonly id?: string } | null;
  readonly revokedBy: { readonly kind: string; readonly id?: string } | null;
}

const ALL_SCOPES = ['pets:read', 'pets:write', 'usage:read'];

interface OperatorToken {
  readonly id: string;
  readonly name: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

interface Account {
  readonly name: string;
  readonly plan: string;
  readonly limits: { readonly perMinute: number; readonly perDay: number };
  readonly today: { readonly used: number | null; readonly limit: number };
  readonly keys: { readonly total: number; readonly active: number };
  readonly lastUsedAt: string | null;
  readonly createdAt: string;
  readonly keyLimit: number;
}

interface History {
  readonly from: string;
  readonly to: string;
  readonly granularity: string;
  readonly points: ReadonlyArray<{ at: string; operation: string; outcome: string; count: number }>;
}

let unique = 0;
function accountName(): string {
  unique += 1;
  return `admin-${process.pid}-${unique}`;
}

describeEachBackend('the admin API', (backend) => {
  let app: OperatorTestApp;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock(MID);
    app = await startOperatorTestApp({ backend, clock, env: { BAN_THRESHOLD: '1' } });
  });
  after(() => app.close());

  /** A request to the operator listener with the operator token. */
  const admin = (path: string, options: HttpRequest = {}): Promise<HttpAnswer> =>
    request(app.operator, path, { key: app.token, ...options });

  function ok<T>(answer: HttpAnswer, status = 200): T {
    assert.equal(answer.status, status, answer.text);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    return answer.json<T>();
  }

  async function newAccount(plan = 'free', limits: { perMinute?: number; perDay?: number } = {}): Promise<string> {
    const name = accountName();
    ok(await admin('/admin/v1/accounts', { method: 'POST', json: { name, plan, ...limits } }), 201);
    return name;
  }

  async function newKey(account: string, body?: unknown): Promise<Key & { key: string }> {
    const path = `/admin/v1/accounts/${account}/keys`;
    return ok(await admin(path, { method: 'POST', ...(body === undefined ? {} : { json: body }) }), 201);
  }

  it('serves its own OpenAPI document, apart from the public one', async () => {
    const document = ok<OpenApiDocument>(await admin('/admin/v1/openapi.json'));
    assert.match(document.openapi, /^3\.1\./);
    assert.deepEqual(document.servers, [{ url: '/admin/v1' }]);
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(operations.sort(), [
      'DELETE /session',
      'GET /accounts',
      'GET /accounts/{name}',
      'GET /accounts/{name}/keys',
      'GET /accounts/{name}/usage',
      'GET /accounts/{name}/usage/history',
      'GET /audit',
      'GET /bans',
      'GET /deprecated-callers',
      'GET /operator-tokens',
      'GET /status',
      'GET /usage/history',
      'GET /usage/top',
      'POST /accounts',
      'POST /accounts/{name}/keys',
      'POST /bans/{keyId}/lift',
      'POST /keys/{id}/revoke',
      'POST /operator-tokens/{id}/revoke',
      'POST /session',
      'PUT /accounts/{name}/key-limit',
      'PUT /accounts/{name}/plan',
    ]);
    const publicAnswer = await request(app.publicApp, '/v1/openapi.json');
    assert.equal(publicAnswer.status, 200);
    const publicDocument = publicAnswer.json<OpenApiDocument>();
    assert.ok(
      Object.keys(publicDocument.paths).every((path) => !path.includes('admin') && !path.includes('session')),
      'the public document shows nothing of the admin API',
    );
  });

  it('checks answers against that document: one off it fails', async () => {
    const contract = await loadContract(app.operator);
    assert.equal(pathTemplateOf(contract, '/admin/v1/accounts/acme/keys'), '/accounts/{name}/keys');
    const answer = (bodyText: string, status = 200) => ({
      status,
      headers: new Headers({ 'content-type': 'application/json' }),
      bodyText,
    });
    assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[],"nextCursor":null}'));
    assert.throws(() => assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[]}')));
    assert.throws(() =>
      assertMatchesDocument(contract, 'GET', '/accounts/{name}/keys', answer('{"keys":[{"id":1}],"nextCursor":null}')),
    );
    assert.throws(() => assertMatchesDocument(contract, 'GET', '/status', answer('{}', 418)));
  });

  it('GET /status: storage, Redis, accounts and bans', async () => {
    await newAccount();
    const status = ok<{
      storage: { backend: string; ready: boolean };
      redis: { ready: boolean } | null;
      accounts: number;
      activeBans: number;
      checkedAt: string;
      countsUnavailable: string | null;
    }>(await admin('/admin/v1/status'));
    assert.deepEqual(status.storage, { backend: backend.name, ready: true });
    assert.equal(status.countsUnavailable, null);
    assert.equal(status.checkedAt, new Date(app.publicApp.clock.now()).toISOString(), 'probed for this request');
    assert.deepEqual(status.redis, backend.name === 'postgres' ? { ready: true } : null);
    assert.equal(status.accounts, (await app.publicApp.services.accounts.listAccounts()).length);
    assert.equal(status.activeBans, (await app.publicApp.services.accounts.listActiveBans()).length);
  });

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

  /** Every page of a list, following nextCursor from `path` (which has a query already). */
  async function everyPage<T>(path: string, items: 'accounts' | 'keys'): Promise<{ pages: T[][]; cursors: string[] }> {
    const pages: T[][] = [];
    const cursors: string[] = [];
    for (let cursor: string | null = null; pages.length === 0 || cursor !== null;) {
      const suffix: string = cursor === null ? '' : `&cursor=${cursor}`;
      const page = ok<Record<typeof items, T[]> & { nextCursor: string | null }>(await admin(`${path}${suffix}`));
      pages.push(page[items]);
      cursor = page.nextCursor;
      if (cursor !== null) cursors.push(cursor);
      assert.ok(pages.length <= 100, 'the pages end');
    }
    return { pages, cursors };
  }

  const namesOf = (accounts: readonly Account[]): string[] => accounts.map((account) => account.name);

  it('GET /accounts: q finds names by a substring in any case, wildcards as themselves', async () => {
    const stem = `Find-${process.pid}-${++unique}`;
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
    const stem = `page-${process.pid}-${++unique}`;
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

  it("GET /accounts/{name}/keys: limit and cursor page through its keys in the account's order", async () => {
    clock.set(MID);
    const name = await newAccount();
    // Three in the same millisecond: their ids order them.
    for (let made = 0; made < 3; made += 1) await newKey(name);
    clock.advance(1000);
    await newKey(name);
    clock.set(MID);
    const shown = ok<Account & { keys: Key[] }>(await admin(`/admin/v1/accounts/${name}`)).keys;
    const paged = await everyPage<Key>(`/admin/v1/accounts/${name}/keys?limit=3`, 'keys');
    assert.deepEqual(
      paged.pages.map((page) => page.length),
      [3, 1],
    );
    assert.deepEqual(paged.pages.flat(), shown);
    const ones = await everyPage<Key>(`/admin/v1/accounts/${name}/keys?limit=1`, 'keys');
    assert.deepEqual(ones.pages.flat(), shown);
    const whole = ok<{ keys: Key[]; nextCursor: string | null }>(await admin(`/admin/v1/accounts/${name}/keys`));
    assert.deepEqual(whole, { keys: shown, nextCursor: null });

    const accountsCursor = Buffer.from('a1.1').toString('base64url');
    for (const bad of ['nope', accountsCursor, Buffer.from('k1.1.key/x').toString('base64url')]) {
      assertError(await admin(`/admin/v1/accounts/${name}/keys?cursor=${bad}`), 400, 'invalid_query', "'cursor'");
    }
    assertError(await admin(`/admin/v1/accounts/${name}/keys?limit=201`), 400, 'invalid_query', "'limit'");
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

  it('refuses names and ids in paths that no account, key or token can have, before storage sees them', async () => {
    // PostgreSQL refuses text holding NUL: such a path once answered 500 there.
    for (const [name, mention] of [
      ['%00', 'control characters'],
      ['a%00b', 'control characters'],
      ['.hidden', 'account name'],
      ['has%20space', 'account name'],
      ['x'.repeat(65), 'account name'],
    ] as const) {
      for (const [method, path] of [
        ['GET', `/admin/v1/accounts/${name}`],
        ['GET', `/admin/v1/accounts/${name}/keys`],
        ['POST', `/admin/v1/accounts/${name}/keys`],
        ['GET', `/admin/v1/accounts/${name}/usage`],
        ['GET', `/admin/v1/accounts/${name}/usage/history`],
      ] as const) {
        assertError(await admin(path, { method }), 400, 'invalid_path', mention);
      }
    }
    for (const id of ['%00', 'key_%01', '%7F']) {
      for (const path of [
        `/admin/v1/keys/${id}/revoke`,
        `/admin/v1/bans/${id}/lift`,
        `/admin/v1/operator-tokens/${id}/revoke`,
      ]) {
        assertError(await admin(path, { method: 'POST' }), 400, 'invalid_path', 'control characters');
      }
    }
    assertError(await admin('/admin/v1/keys/key_unknown/revoke', { method: 'POST' }), 404, 'not_found');
    for (const query of ['/accounts?q=%00', '/accounts?q=a%00b', '/audit?target=account:a%00', '/audit?actor=%01']) {
      assertError(await admin(`/admin/v1${query}`), 400, 'invalid_query', 'control characters');
    }
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

  it('POST /accounts/{name}/keys makes a key that works on the public listener; GET lists them', async () => {
    const name = await newAccount();
    clock.set(MID);
    const plain = await newKey(name);
    assert.match(plain.key, /^pst_[0-9A-Za-z]{36}$/);
    assert.equal(plain.expiresAt, null);
    assert.deepEqual(plain.scopes, ALL_SCOPES, 'a key issued without a choice has every scope');
    assert.equal(plain.state, 'active');
    clock.advance(1000);
    const expiring = await newKey(name, { expiresIn: '30d' });
    assert.equal(expiring.expiresAt, new Date(MID + 1000 + 30 * DAY_MS).toISOString());
    for (const key of [plain.key, expiring.key]) {
      assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    }
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((key) => key.id),
      [plain.id, expiring.id],
    );
    for (const key of listed) {
      assert.match(key.createdAt, ISO);
      assert.equal('key' in key, false, 'a listing never shows a key');
    }
    for (const expiresIn of ['30 days', '0d', 'soon']) {
      const refused = await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { expiresIn } });
      assertError(refused, 400, 'invalid_body', 'expiresIn');
    }
    assertError(
      await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { expiresIn: 5 } }),
      400,
      'invalid_body',
      'expiresIn',
    );
    assertError(await admin('/admin/v1/accounts/nobody-here/keys', { method: 'POST' }), 404, 'not_found');
    assertError(await admin('/admin/v1/accounts/nobody-here/keys'), 404, 'not_found');
    clock.set(MID);
  });

  it('POST /accounts/{name}/keys takes scopes; every view shows them; the public API holds keys to them', async () => {
    clock.set(MID);
    const name = await newAccount();
    const reader = await newKey(name, { scopes: ['pets:read'] });
    assert.deepEqual(reader.scopes, ['pets:read']);
    // A second apart, so that the lists' order (oldest first) is the order made.
    clock.advance(1000);
    const watcher = await newKey(name, { scopes: ['usage:read', 'pets:read'], expiresIn: '30d' });
    assert.deepEqual(watcher.scopes, ['pets:read', 'usage:read'], 'in the canonical order');
    clock.advance(1000);
    const everything = await newKey(name, {});
    assert.deepEqual(everything.scopes, ALL_SCOPES);

    const expected = [
      [reader.id, ['pets:read']],
      [watcher.id, ['pets:read', 'usage:read']],
      [everything.id, ALL_SCOPES],
    ];
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((key) => [key.id, key.scopes]),
      expected,
    );
    const shown = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}`)).keys;
    assert.deepEqual(
      shown.map((key) => [key.id, key.scopes]),
      expected,
    );

    assert.equal((await request(app.publicApp, '/v1/pets', { key: reader.key })).status, 200);
    const pet = { name: 'Scoped', categoryId: 1, status: 'available' };
    const write = await request(app.publicApp, '/v1/pets', { method: 'POST', key: reader.key, json: pet });
    assertError(write, 403, 'insufficient_scope', 'pets:write');
    assertError(await request(app.publicApp, '/v1/usage', { key: reader.key }), 403, 'insufficient_scope');
    assert.equal((await request(app.publicApp, '/v1/usage', { key: watcher.key })).status, 200);

    const revoked = ok<Key>(await admin(`/admin/v1/keys/${reader.id}/revoke`, { method: 'POST' }));
    assert.deepEqual(revoked.scopes, ['pets:read'], 'the revoked key keeps its scopes');
    clock.set(MID);
  });

  it('gives keys:manage only when named; keys show the operator token that created and revoked them', async () => {
    const name = await newAccount();
    const plain = await newKey(name);
    assert.ok(!plain.scopes.includes('keys:manage'), 'never implied');
    const manager = await newKey(name, { scopes: ['keys:manage', 'pets:read'] });
    assert.deepEqual(manager.scopes, ['pets:read', 'keys:manage']);
    const token = { kind: 'operator_token', id: app.token.split('_')[1] };
    assert.deepEqual([manager.name, manager.createdBy, manager.revokedBy], [null, token, null]);
    const revoked = ok<Key>(await admin(`/admin/v1/keys/${plain.id}/revoke`, { method: 'POST' }));
    assert.deepEqual(revoked.revokedBy, token);
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    const makers = new Map(listed.map((key) => [key.id, [key.createdBy, key.revokedBy]]));
    assert.deepEqual(makers.get(plain.id), [token, token]);
    assert.deepEqual(makers.get(manager.id), [token, null]);
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

  it('POST /accounts/{name}/keys refuses unknown, repeated and missing scopes, naming the valid ones', async () => {
    const name = await newAccount();
    const valid = 'pets:read, pets:write, usage:read, keys:manage';
    for (const scopes of [['pets:read', 'Pets:Write'], [], ['pets:read', 'pets:read'], 'pets:read', [7]]) {
      const refused = await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST', json: { scopes } });
      assertError(refused, 400, 'invalid_body', "field 'scopes'", valid);
    }
    const unknown = await admin(`/admin/v1/accounts/${name}/keys`, {
      method: 'POST',
      json: { scopes: ['pets:delete'] },
    });
    assert.equal(
      assertError(unknown, 400, 'invalid_body').message,
      `field 'scopes' must be a list of one or more of ${valid}, each once (got ["pets:delete"])`,
    );
    assert.deepEqual(ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys, [], 'no key was made');
  });

  it('POST /keys/{id}/revoke: the public listener refuses the key at once', async () => {
    clock.set(MID);
    const name = await newAccount();
    const { key, id } = await newKey(name);
    // Used first, so that this instance holds a cached answer about it.
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    const revoked = ok<Key>(await admin(`/admin/v1/keys/${id}/revoke`, { method: 'POST' }));
    assert.equal(revoked.state, 'revoked');
    assert.equal(revoked.revokedAt, new Date(MID).toISOString());
    assertError(await request(app.publicApp, '/v1/pets', { key }), 401, 'unauthorized', 'revoked');
    // Revoking again keeps the first time.
    clock.advance(1000);
    assert.equal(ok<Key>(await admin(`/admin/v1/keys/${id}/revoke`, { method: 'POST' })).revokedAt, revoked.revokedAt);
    clock.set(MID);
    assertError(await admin('/admin/v1/keys/key_nope/revoke', { method: 'POST' }), 404, 'not_found', 'key_nope');
  });

  it('GET /bans lists a ban in force; POST /bans/{keyId}/lift ends it on the public listener', async () => {
    clock.set(MID);
    const name = await newAccount('enterprise', { perMinute: 2, perDay: 100 });
    const { key, id } = await newKey(name);
    await driveToBan(app.publicApp, key);
    const bans = ok<{ bans: Array<{ keyId: string; account: string; startedAt: string; until: string }> }>(
      await admin('/admin/v1/bans'),
    ).bans;
    const ban = bans.find((listed) => listed.keyId === id);
    assert.ok(ban, `the ban of ${id} is listed: ${JSON.stringify(bans)}`);
    assert.equal(ban.account, name);
    assert.equal(ban.startedAt, new Date(MID).toISOString());
    assert.ok(Date.parse(ban.until) > MID);
    const listed = ok<{ keys: Key[] }>(await admin(`/admin/v1/accounts/${name}/keys`)).keys;
    assert.deepEqual(
      listed.map((listedKey) => [listedKey.state, listedKey.bannedUntil]),
      [['banned', ban.until]],
    );
    const lifted = ok<Key>(await admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' }));
    assert.equal(lifted.state, 'active');
    assert.equal(lifted.bannedUntil, null);
    assert.deepEqual(lifted.scopes, ALL_SCOPES);
    assert.equal(
      ok<{ bans: Array<{ keyId: string }> }>(await admin('/admin/v1/bans')).bans.some((b) => b.keyId === id),
      false,
    );
    // The key is no longer banned: a limited one again, the next minute a served one.
    clock.advance(60_000);
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    assertError(await admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' }), 404, 'not_found', 'not banned');
    assertError(await admin('/admin/v1/bans/key_nope/lift', { method: 'POST' }), 404, 'not_found');
    clock.set(MID);
  });

  it('GET /operator-tokens lists tokens without secrets; POST …/{id}/revoke refuses one at once', async () => {
    clock.set(MID);
    const { token, record } = await app.tokens.create('to revoke');
    const session = await app.logIn(token);
    assert.equal((await request(app.operator, '/admin/v1/status', { key: token })).status, 200);
    const listed = ok<{ tokens: OperatorToken[] }>(await admin('/admin/v1/operator-tokens'));
    const mine = listed.tokens.find((listedToken) => listedToken.id === record.id);
    assert.ok(mine, `${record.id} is listed`);
    // Its use is written in the background: listed once written.
    assert.ok([null, new Date(MID).toISOString()].includes(mine.lastUsedAt), String(mine.lastUsedAt));
    assert.deepEqual(mine, {
      id: record.id,
      name: 'to revoke',
      createdAt: new Date(MID).toISOString(),
      lastUsedAt: mine.lastUsedAt,
      revokedAt: null,
    });
    assert.ok(
      listed.tokens.some((listedToken) => listedToken.name === 'tests'),
      'every token is listed',
    );
    const secret = token.slice(21);
    assert.ok(!JSON.stringify(listed).includes(secret), 'no secret');
    const stored = await app.publicApp.services.store.operatorTokens.findById(record.id);
    assert.ok(stored && !JSON.stringify(listed).includes(stored.hash), 'no hash');

    clock.advance(1000);
    const revoked = ok<OperatorToken>(await admin(`/admin/v1/operator-tokens/${record.id}/revoke`, { method: 'POST' }));
    assert.equal(revoked.revokedAt, new Date(MID + 1000).toISOString());
    assertError(await request(app.operator, '/admin/v1/status', { key: token }), 401, 'unauthorized');
    const withSession = await request(app.operator, '/admin/v1/status', { headers: { cookie: session } });
    assertError(withSession, 401, 'unauthorized', 'session');
    clock.advance(1000);
    const again = ok<OperatorToken>(await admin(`/admin/v1/operator-tokens/${record.id}/revoke`, { method: 'POST' }));
    assert.equal(again.revokedAt, revoked.revokedAt, 'revoking twice keeps the first time');
    assert.equal(
      ok<{ tokens: OperatorToken[] }>(await admin('/admin/v1/operator-tokens')).tokens.find((t) => t.id === record.id)
        ?.revokedAt,
      revoked.revokedAt,
    );
    for (const id of ['Z'.repeat(16), 'nope']) {
      assertError(await admin(`/admin/v1/operator-tokens/${id}/revoke`, { method: 'POST' }), 404, 'not_found', id);
    }
    // Creating one stays with the command-line tool.
    const create = await admin('/admin/v1/operator-tokens', { method: 'POST', json: { name: 'x' } });
    assertError(create, 405, 'method_not_allowed');
    clock.set(MID);
  });

  it("usage: an account's last 30 days and deprecated calls, histories, the top accounts, the callers", async () => {
    clock.set(MID);
    const name = await newAccount('pro');
    const { key, id } = await newKey(name);
    const created = await request(app.publicApp, '/v1/pets', {
      key,
      method: 'POST',
      json: { name: 'Rex', categoryId: 1 },
    });
    assert.equal(created.status, 201, created.text);
    const petId = created.json<{ id: number }>().id;
    assert.equal((await request(app.publicApp, '/v1/pets', { key })).status, 200);
    assert.equal((await request(app.publicApp, `/v1/pets/${petId}`, { key })).status, 200);
    assert.equal((await request(app.publicApp, '/v1/pets/999999999', { key })).status, 404);

    const usage = ok<{
      account: string;
      last30Days: { requests: number; refusals: number };
      deprecated: Array<{ operation: string; calls: number; lastCall: string | null; keys: unknown[] }>;
    }>(await admin(`/admin/v1/accounts/${name}/usage`));
    assert.equal(usage.account, name);
    assert.deepEqual(usage.last30Days, { requests: 4, refusals: 0 });
    assert.equal(usage.deprecated.length, 1);
    assert.equal(usage.deprecated[0]?.operation, 'getPet');
    assert.equal(usage.deprecated[0]?.calls, 2);
    assert.deepEqual(usage.deprecated[0]?.keys, [{ id, calls: 2, lastCall: new Date(MID).toISOString() }]);

    const hour = new Date(MID - (MID % 3_600_000)).toISOString();
    const history = ok<History>(await admin(`/admin/v1/accounts/${name}/usage/history`));
    assert.equal(history.granularity, 'hour');
    assert.deepEqual(history.points, [
      { at: hour, operation: 'createPet', outcome: '2xx', count: 1 },
      { at: hour, operation: 'getPet', outcome: '2xx', count: 1 },
      { at: hour, operation: 'getPet', outcome: '4xx', count: 1 },
      { at: hour, operation: 'listPets', outcome: '2xx', count: 1 },
    ]);
    const daily = ok<History>(await admin(`/admin/v1/accounts/${name}/usage/history?granularity=day&from=2026-05-20`));
    assert.equal(daily.from, '2026-05-20T00:00:00.000Z');
    assert.equal(
      daily.points.reduce((sum, point) => sum + point.count, 0),
      4,
    );

    const everyone = ok<History>(await admin('/admin/v1/usage/history'));
    const listPets = everyone.points.find((point) => point.operation === 'listPets' && point.outcome === '2xx');
    assert.ok((listPets?.count ?? 0) >= 1, 'the history of every account holds this one');

    const top = ok<{ by: string; accounts: Array<{ account: string; requests: number; refusals: number }> }>(
      await admin('/admin/v1/usage/top?by=requests&limit=100'),
    );
    assert.equal(top.by, 'requests');
    assert.deepEqual(
      top.accounts.find((account) => account.account === name),
      { account: name, requests: 4, refusals: 0 },
    );

    const callers = ok<{ operation: string; sunset: string; since: string; callers: unknown[] }>(
      await admin('/admin/v1/deprecated-callers'),
    );
    assert.equal(callers.operation, 'getPet');
    assert.equal(callers.sunset, '2030-12-05T00:00:00.000Z');
    assert.equal(callers.since, new Date(MID - 30 * DAY_MS).toISOString());
    assert.ok(
      callers.callers.some(
        (caller) =>
          JSON.stringify(caller) ===
          JSON.stringify({ account: name, keyId: id, calls: 2, lastCall: new Date(MID).toISOString() }),
      ),
      JSON.stringify(callers.callers),
    );

    for (const query of [
      'granularity=week',
      'from=yesterday',
      'from=2026-06-02&to=2026-06-01',
      'from=2026-01-01&to=2026-06-01',
    ]) {
      assertError(await admin(`/admin/v1/usage/history?${query}`), 400, 'invalid_query');
      assertError(await admin(`/admin/v1/accounts/${name}/usage/history?${query}`), 400, 'invalid_query');
    }
    for (const query of ['by=money', 'limit=0', 'limit=101', 'limit=ten', 'from=soon']) {
      assertError(await admin(`/admin/v1/usage/top?${query}`), 400, 'invalid_query');
    }
    assertError(await admin('/admin/v1/accounts/nobody-here/usage'), 404, 'not_found');
    assertError(await admin('/admin/v1/accounts/nobody-here/usage/history'), 404, 'not_found');
  });

  it('usage histories refuse dates and times that do not exist and ranges over 90 days once widened', async () => {
    clock.set(MID);
    const name = await newAccount();
    for (const path of ['/admin/v1/usage/history', `/admin/v1/accounts/${name}/usage/history`]) {
      for (const [query, ...mentions] of [...NONEXISTENT_INSTANTS, ...PAST_90_DAYS_ONCE_WIDENED])
        assertError(await admin(`${path}?${query}`), 400, 'invalid_query', ...mentions);
      assert.equal(ok<History>(await admin(`${path}?${LEAP_DAY.query}`)).from, LEAP_DAY.from);
      const longest = ok<History>(await admin(`${path}?${WIDENED_TO_90_DAYS.query}`));
      assert.deepEqual([longest.from, longest.to], [WIDENED_TO_90_DAYS.from, WIDENED_TO_90_DAYS.to]);
    }
    for (const [query, ...mentions] of NONEXISTENT_INSTANTS)
      assertError(await admin(`/admin/v1/usage/top?${query}`), 400, 'invalid_query', ...mentions);
  });
});
