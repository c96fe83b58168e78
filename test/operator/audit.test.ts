import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { before, it } from 'node:test';
import { Client } from 'pg';
import { OperatorTokenService } from '../../src/auth/operator-tokens.ts';
import { driveToBan, MID } from '../ratelimit/rate-limit-assertions.ts';
import { runCliInProcess } from '../support/cli-runner.ts';
import { describeEachBackend } from '../support/each-backend.ts';
import { assertError, request, type HttpAnswer, type HttpRequest } from '../support/http-client.ts';
import type { OpenApiDocument } from '../support/openapi-contract.ts';
import { adminApiForSuite, DAY_MS, ok, uniqueName } from './admin-calls.ts';

/**
 * The audit trail (docs/operations.md, "Audit trail") through the admin API: every change an
 * operator makes there is stored with its token, its request id and the values before and after, in
 * the transaction of the change; nothing of a failed change is; `GET /admin/v1/audit` filters and
 * pages it; no entry ever holds a secret; entries go with the usage history's retention. Answers
 * are checked against the admin document, as every admin test's are.
 */

interface Entry {
  readonly id: number;
  readonly at: string;
  readonly actor: { kind: 'operator_token'; id: string; name: string | null } | { kind: 'cli'; user: string };
  readonly via: 'console' | 'api' | 'cli';
  readonly action: string;
  readonly target: { type: string; id: string };
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
  readonly requestId: string | null;
}

interface Trail {
  readonly entries: Entry[];
  readonly nextCursor: string | null;
}

const accountName = (): string => uniqueName('audit');

describeEachBackend('the audit trail of the admin API', (backend) => {
  const { app, clock, admin } = adminApiForSuite(backend);
  let tokenId: string;

  before(() => {
    tokenId = app.token.split('_')[1] as string;
  });

  /** A change sent with its own request id, which its entry must carry. */
  async function change(path: string, method: string, requestId: string, json?: unknown): Promise<HttpAnswer> {
    const answer = await admin(path, {
      method,
      headers: { 'x-request-id': requestId },
      ...(json === undefined ? {} : { json }),
    });
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.text}`);
    return answer;
  }

  async function trail(query = ''): Promise<Trail> {
    return ok<Trail>(await admin(`/admin/v1/audit${query === '' ? '' : `?${query}`}`));
  }

  /** The newest entry with this target. */
  async function latest(target: string): Promise<Entry> {
    const [entry] = (await trail(`target=${encodeURIComponent(target)}&limit=1`)).entries;
    assert.ok(entry, `an entry for ${target}`);
    return entry;
  }

  function assertMadeHere(entry: Entry, requestId: string): void {
    assert.deepEqual(entry.actor, { kind: 'operator_token', id: tokenId, name: 'tests' });
    assert.equal(entry.via, 'api', 'a request with Authorization: Bearer');
    assert.equal(entry.requestId, requestId);
    assert.equal(entry.at, new Date(clock.now()).toISOString(), 'at: the injected clock');
  }

  it('records each change with the token, the request id, and the values before and after', async () => {
    clock.set(MID);
    const name = accountName();
    await change('/admin/v1/accounts', 'POST', 'req-create', { name, plan: 'pro' });
    const created = await latest(`account:${name}`);
    assertMadeHere(created, 'req-create');
    assert.equal(created.action, 'account.create');
    assert.deepEqual(created.target, { type: 'account', id: name });
    assert.equal(created.before, null);
    assert.deepEqual(created.after, { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } });

    clock.advance(1000);
    const limits = { plan: 'enterprise', perMinute: 2, perDay: 100 };
    await change(`/admin/v1/accounts/${name}/plan`, 'PUT', 'req-plan', limits);
    const updated = await latest(`account:${name}`);
    assertMadeHere(updated, 'req-plan');
    assert.equal(updated.action, 'account.update');
    assert.deepEqual(updated.before, { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } });
    assert.deepEqual(updated.after, { plan: 'enterprise', limits: { perMinute: 2, perDay: 100 } });

    clock.advance(1000);
    const path = `/admin/v1/accounts/${name}/keys`;
    const choice = { expiresIn: '30d', scopes: ['usage:read', 'pets:read'] };
    const key = (await change(path, 'POST', 'req-key', choice)).json<{ key: string; id: string }>();
    const issued = await latest(`key:${key.id}`);
    assertMadeHere(issued, 'req-key');
    assert.equal(issued.action, 'key.create');
    assert.equal(issued.before, null);
    assert.deepEqual(issued.after, {
      account: name,
      expiresAt: new Date(clock.now() + 30 * DAY_MS).toISOString(),
      scopes: ['pets:read', 'usage:read'],
    });

    clock.advance(1000);
    await driveToBan(app.publicApp, key.key);
    const bannedUntil = (await app.publicApp.services.accounts.findKey(key.id)).bannedUntil;
    assert.ok(bannedUntil !== null);
    await change(`/admin/v1/bans/${key.id}/lift`, 'POST', 'req-lift');
    const lifted = await latest(`key:${key.id}`);
    assertMadeHere(lifted, 'req-lift');
    assert.equal(lifted.action, 'ban.lift');
    assert.deepEqual(lifted.before, { bannedUntil: new Date(bannedUntil).toISOString() });
    assert.deepEqual(lifted.after, { bannedUntil: null });

    clock.advance(1000);
    await change(`/admin/v1/keys/${key.id}/revoke`, 'POST', 'req-revoke');
    const revoked = await latest(`key:${key.id}`);
    assertMadeHere(revoked, 'req-revoke');
    assert.equal(revoked.action, 'key.revoke');
    assert.deepEqual(revoked.before, { revokedAt: null });
    assert.deepEqual(revoked.after, { revokedAt: new Date(clock.now()).toISOString() });

    // Revoking again changes nothing, and says so: before and after are the same.
    clock.advance(1000);
    await change(`/admin/v1/keys/${key.id}/revoke`, 'POST', 'req-again');
    const again = await latest(`key:${key.id}`);
    assert.equal(again.requestId, 'req-again');
    assert.deepEqual(again.before, revoked.after);
    assert.deepEqual(again.after, revoked.after);
    clock.set(MID);
  });

  it('records the lifting of a ban the rate limiter alone held, right after the limiter ended it', async () => {
    // Before the other tests' times: they look for entries at or after theirs.
    clock.set(MID - DAY_MS);
    const name = accountName();
    await change('/admin/v1/accounts', 'POST', 'req-held', { name, plan: 'enterprise', perMinute: 2, perDay: 100 });
    const key = (await change(`/admin/v1/accounts/${name}/keys`, 'POST', 'req-held-key')).json<{
      key: string;
      id: string;
    }>();
    await driveToBan(app.publicApp, key.key);
    // As if recording the ban had failed: storage knows of none, the limiter holds it.
    await app.publicApp.execute(`DELETE FROM key_bans WHERE key_id = '${key.id}'`);
    const lifted = await change(`/admin/v1/bans/${key.id}/lift`, 'POST', 'req-held-lift');
    assert.equal(lifted.json<{ state: string }>().state, 'active');
    const entry = await latest(`key:${key.id}`);
    assertMadeHere(entry, 'req-held-lift');
    assert.equal(entry.action, 'ban.lift');
    assert.deepEqual([entry.before, entry.after], [{ bannedUntil: null }, { bannedUntil: null }]);
    assert.equal((await request(app.publicApp, '/v1/usage', { key: key.key })).status, 200, 'no longer banned');
    clock.set(MID);
  });

  it('records every state-changing operation of the admin document', async () => {
    // A time of this test's own: the entries at or after it are this test's.
    const start = MID + 2 * DAY_MS;
    clock.set(start);
    const name = accountName();
    const keyOf = async (): Promise<string> => {
      const created = await admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST' });
      return created.json<{ id: string }>().id;
    };
    /** How each operation that may change something is made once, and the action it records. */
    const operations: Record<string, { action: string; make: () => Promise<HttpAnswer> }> = {
      'POST /accounts': {
        action: 'account.create',
        make: () => admin('/admin/v1/accounts', { method: 'POST', json: { name, plan: 'free' } }),
      },
      'PUT /accounts/{name}/plan': {
        action: 'account.update',
        make: () => admin(`/admin/v1/accounts/${name}/plan`, { method: 'PUT', json: { plan: 'business' } }),
      },
      'PUT /accounts/{name}/key-limit': {
        action: 'account.update',
        make: () => admin(`/admin/v1/accounts/${name}/key-limit`, { method: 'PUT', json: { keyLimit: 7 } }),
      },
      'POST /accounts/{name}/keys': {
        action: 'key.create',
        make: () => admin(`/admin/v1/accounts/${name}/keys`, { method: 'POST' }),
      },
      'POST /keys/{id}/revoke': {
        action: 'key.revoke',
        make: async () => admin(`/admin/v1/keys/${await keyOf()}/revoke`, { method: 'POST' }),
      },
      'POST /bans/{keyId}/lift': {
        action: 'ban.lift',
        make: async () => {
          const id = await keyOf();
          await app.publicApp.services.store.bans.ban(id, clock.now(), clock.now() + 60_000);
          return admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' });
        },
      },
      'POST /operator-tokens/{id}/revoke': {
        action: 'operator_token.revoke',
        make: async () => {
          const { record } = await new OperatorTokenService(app.publicApp.services.store, clock).create('spare');
          return admin(`/admin/v1/operator-tokens/${record.id}/revoke`, { method: 'POST' });
        },
      },
    };
    /** Logging in and out of the console: its session, not a change to what the service serves. */
    const notChanges = new Set(['POST /session', 'DELETE /session']);
    const document = ok<OpenApiDocument>(await admin('/admin/v1/openapi.json'));
    const changing = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => method !== 'get')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(
      changing.filter((operation) => !notChanges.has(operation)).sort(),
      Object.keys(operations).sort(),
      'each operation that changes something is made below, and its entry looked for',
    );
    for (const [operation, { action, make }] of Object.entries(operations)) {
      clock.advance(1000);
      const answer = await make();
      assert.ok(answer.status < 300, `${operation}: ${answer.text}`);
      const [entry, ...others] = (await trail(`from=${new Date(clock.now()).toISOString()}`)).entries;
      // A revocation and a lifting first made a key (POST …/keys), which has its own entry.
      assert.equal(entry?.action, action, `${operation} records ${action}`);
      assert.equal(entry.requestId, answer.headers.get('x-request-id'), operation);
      assert.ok(
        others.every((other) => other.action === 'key.create'),
        `${operation} records nothing else: ${JSON.stringify(others)}`,
      );
    }
    clock.set(MID);
  });

  it('records nothing of a change that fails', async () => {
    const start = MID + 3 * DAY_MS;
    clock.set(start);
    const taken = accountName();
    await change('/admin/v1/accounts', 'POST', 'req-taken', { name: taken, plan: 'free' });
    clock.advance(1000);
    const failures: ReadonlyArray<readonly [string, HttpRequest, number]> = [
      ['/admin/v1/accounts', { method: 'POST', json: { name: taken, plan: 'pro' } }, 409],
      ['/admin/v1/accounts', { method: 'POST', json: { name: accountName(), plan: 'gold' } }, 400],
      [`/admin/v1/accounts/${accountName()}/plan`, { method: 'PUT', json: { plan: 'pro' } }, 404],
      [`/admin/v1/accounts/${taken}/plan`, { method: 'PUT', json: { plan: 'enterprise' } }, 400],
      [`/admin/v1/accounts/${accountName()}/key-limit`, { method: 'PUT', json: { keyLimit: 7 } }, 404],
      [`/admin/v1/accounts/${accountName()}/keys`, { method: 'POST' }, 404],
      [`/admin/v1/accounts/${taken}/keys`, { method: 'POST', json: { expiresIn: 'soon' } }, 400],
      ['/admin/v1/keys/key_nope/revoke', { method: 'POST' }, 404],
      ['/admin/v1/bans/key_nope/lift', { method: 'POST' }, 404],
    ];
    for (const [path, options, status] of failures) assert.equal((await admin(path, options)).status, status, path);
    const { id } = ok<{ id: string }>(await admin(`/admin/v1/accounts/${taken}/keys`, { method: 'POST' }), 201);
    assert.equal((await admin(`/admin/v1/bans/${id}/lift`, { method: 'POST' })).status, 404, 'not banned');
    assert.deepEqual(
      (await trail(`from=${new Date(clock.now()).toISOString()}`)).entries.map((entry) => entry.action),
      ['key.create'],
      'only the key that was made',
    );
    clock.set(MID);
  });

  it('filters by actor, target, action and time, and pages newest first with a cursor', async () => {
    const start = MID + 4 * DAY_MS;
    clock.set(start);
    const name = accountName();
    await change('/admin/v1/accounts', 'POST', 'req-page', { name, plan: 'free' });
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      clock.advance(1000);
      const created = await change(`/admin/v1/accounts/${name}/keys`, 'POST', `req-page-${index}`);
      ids.push(created.json<{ id: string }>().id);
    }
    const since = new Date(start).toISOString();
    const mine = `actor=${tokenId}&from=${since}&action=key.create`;
    const all = (await trail(mine)).entries;
    assert.deepEqual(
      all.map((entry) => entry.target.id),
      [...ids].reverse(),
      'newest first',
    );

    const paged: Entry[] = [];
    let query = `${mine}&limit=2`;
    const links: string[] = [];
    for (;;) {
      const answer = await admin(`/admin/v1/audit?${query}`);
      const page = ok<Trail>(answer);
      paged.push(...page.entries);
      if (page.nextCursor === null) {
        assert.equal(answer.headers.get('link'), null, 'the last page has no next link');
        break;
      }
      assert.equal(page.entries.length, 2);
      const link = answer.headers.get('link') ?? '';
      links.push(link);
      assert.match(link, /^<\/admin\/v1\/audit\?[^>]*cursor=[^>]+>; rel="next"$/);
      // The next link and the cursor name the same page.
      query = /^<\/admin\/v1\/audit\?([^>]*)>/.exec(link)?.[1] ?? '';
      assert.ok(query.includes(`cursor=${page.nextCursor}`), link);
    }
    assert.equal(links.length, 2);
    assert.deepEqual(paged, all, 'every entry once, in order');

    assert.deepEqual(
      (await trail(`target=account:${name}`)).entries.map((entry) => entry.action),
      ['account.create'],
    );
    assert.deepEqual(
      (await trail(`target=key:${ids[2]}`)).entries.map((entry) => entry.requestId),
      ['req-page-2'],
    );
    const keysOnly = (await trail(`target=key&from=${since}`)).entries;
    assert.ok(keysOnly.length >= 5 && keysOnly.every((entry) => entry.target.type === 'key'));
    const window = `from=${new Date(start + 2000).toISOString()}&to=${new Date(start + 4000).toISOString()}`;
    assert.deepEqual(
      (await trail(window)).entries.map((entry) => entry.target.id),
      [ids[2], ids[1]],
      'from inclusive, to exclusive',
    );
    assert.deepEqual((await trail(`actor=cli&from=${since}`)).entries, [], 'none from the CLI');
    assert.deepEqual((await trail(`action=operator_token.revoke&from=${since}`)).entries, []);
    clock.set(MID);
  });

  it('refuses a malformed filter with 400 naming the parameter', async () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ['actor=alice', 'actor'],
      ['actor=cli:', 'actor'],
      ['actor=AbCdEfGh0123456', 'actor'],
      ['target=pet:1', 'target'],
      ['target=account:', 'target'],
      ['action=account.delete', 'action'],
      ['from=2026-02-30', 'from'],
      ['from=yesterday', 'from'],
      ['to=2026-06-01T24:00:00Z', 'to'],
      ['from=2026-06-02&to=2026-06-01', 'from'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=nope', 'cursor'],
      [`cursor=${Buffer.from('a1.1.x').toString('base64url')}`, 'cursor'],
      ['action=key.create&action=key.revoke', 'action'],
      ['via=browser', 'via'],
      ['via=API', 'via'],
    ];
    for (const [query, parameter] of cases) {
      assertError(await admin(`/admin/v1/audit?${query}`), 400, 'invalid_query', parameter);
    }
    assert.equal((await trail('limit=200&actor=cli:nobody&target=operator_token')).entries.length, 0);
  });

  it('never stores a key, a token or a hash, whoever issued them', async () => {
    const name = accountName();
    await change('/admin/v1/accounts', 'POST', 'req-secret', { name, plan: 'free' });
    const issued = [
      (await change(`/admin/v1/accounts/${name}/keys`, 'POST', 'req-secret-key')).json<{ key: string }>().key,
    ];
    const env = { DATABASE_URL: app.publicApp.services.config.databaseUrl };
    const cli = async (...args: string[]): Promise<string> => {
      const result = await runCliInProcess(args, env);
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.trim().split('\n').at(-1) ?? '';
    };
    issued.push(await cli('key', 'create', '--account', name));
    const token = await cli('operator', 'token', 'create', '--name', 'secret test');
    issued.push(token);
    await cli('operator', 'token', 'revoke', '--id', token.split('_')[1] as string);
    assert.ok(issued[1]?.startsWith('pst_') && token.startsWith('pso_'), issued.join(' '));

    const { databaseUrl } = app.publicApp.services.config;
    const rows = await rawRows(databaseUrl, 'audit_entries');
    assert.ok(rows.length >= 5, 'the issuing is recorded');
    const stored = JSON.stringify(rows);
    const hashes = [
      ...(await rawRows(databaseUrl, 'api_keys')).map((row) => String(row.hash)),
      ...(await rawRows(databaseUrl, 'operator_tokens')).map((row) => String(row.hash)),
    ];
    assert.ok(hashes.length >= 3);
    for (const secret of [...issued, ...issued.map((text) => text.slice(-32)), ...hashes]) {
      assert.ok(!stored.includes(secret), `an entry holds ${secret.slice(0, 8)}…`);
    }
    assert.doesNotMatch(stored, /pst_|pso_/);
    assert.doesNotMatch(stored, /authorization|cookie|bearer/i);
    const entries = (await trail('actor=cli&limit=200')).entries;
    assert.deepEqual(
      entries.slice(0, 3).map((entry) => entry.action),
      ['operator_token.revoke', 'operator_token.create', 'key.create'],
    );
  });

  it('deletes entries older than USAGE_RETENTION_DAYS with the usage history', async () => {
    const name = accountName();
    clock.set(MID - 91 * DAY_MS);
    await change('/admin/v1/accounts', 'POST', 'req-old', { name, plan: 'free' });
    clock.set(MID - 89 * DAY_MS);
    await change(`/admin/v1/accounts/${name}/plan`, 'PUT', 'req-kept', { plan: 'pro' });
    clock.set(MID);
    assert.notEqual(await app.publicApp.services.usageFlusher.purgeExpired(), false);
    assert.deepEqual(
      (await trail(`target=account:${name}`)).entries.map((entry) => entry.requestId),
      ['req-kept'],
    );
  });

  it('tells a change made through the console (its session cookie) from one made through the admin API', async () => {
    // After every other test's time: they look for entries at or after theirs.
    const start = MID + 5 * DAY_MS;
    clock.set(start);
    const cookie = await app.logIn();
    const name = accountName();
    const throughConsole = await request(app.operator, '/admin/v1/accounts', {
      method: 'POST',
      headers: { cookie, origin: app.operator.url, 'x-request-id': 'req-console' },
      json: { name, plan: 'free' },
    });
    assert.equal(throughConsole.status, 201, throughConsole.text);
    clock.advance(1000);
    await change(`/admin/v1/accounts/${name}/plan`, 'PUT', 'req-api', { plan: 'pro' });
    clock.advance(1000);
    // A request with both: the authentication takes the header's token, so the change is the admin API's.
    const both = await admin(`/admin/v1/accounts/${name}/keys`, {
      method: 'POST',
      headers: { cookie, origin: app.operator.url, 'x-request-id': 'req-both' },
    });
    assert.equal(both.status, 201, both.text);

    // This test's window, before the real time of the CLI's entries of the test before.
    const since = `from=${new Date(start).toISOString()}&to=${new Date(clock.now() + 1).toISOString()}`;
    const made = (await trail(since)).entries;
    assert.deepEqual(
      made.map((entry) => [entry.requestId, entry.via, entry.actor]),
      [
        ['req-both', 'api', { kind: 'operator_token', id: tokenId, name: 'tests' }],
        ['req-api', 'api', { kind: 'operator_token', id: tokenId, name: 'tests' }],
        ['req-console', 'console', { kind: 'operator_token', id: tokenId, name: 'tests' }],
      ],
    );
    const byVia = async (via: string): Promise<(string | null)[]> =>
      (await trail(`${since}&via=${via}`)).entries.map((entry) => entry.requestId);
    assert.deepEqual(await byVia('console'), ['req-console']);
    assert.deepEqual(await byVia('api'), ['req-both', 'req-api']);
    assert.deepEqual(await byVia('cli'), []);

    // The CLI's own change says cli.
    const env = { DATABASE_URL: app.publicApp.services.config.databaseUrl };
    const cli = await runCliInProcess(['account', 'set-plan', '--name', name, '--plan', 'business'], env);
    assert.equal(cli.status, 0, cli.stderr);
    const [byCli] = (await trail(`target=account:${name}&via=cli`)).entries;
    assert.equal(byCli?.via, 'cli');
    assert.equal(byCli.actor.kind, 'cli');
    assert.equal(byCli.action, 'account.update');
    clock.set(MID);
  });
});

/** Every row of a table as the database holds it, read apart from the service. */
async function rawRows(databaseUrl: string, table: string): Promise<Array<Record<string, unknown>>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = new DatabaseSync(databaseUrl.slice('sqlite:'.length), { readOnly: true });
    try {
      return database.prepare(`SELECT * FROM ${table}`).all();
    } finally {
      database.close();
    }
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Record<string, unknown>>(`SELECT * FROM ${table}`)).rows;
  } finally {
    await client.end();
  }
}
