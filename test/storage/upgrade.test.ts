import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { Client } from 'pg';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key.ts';
import { ALL_SCOPES, KEY_SCOPES, NEVER_IMPLIED, scopeReader } from '../../src/domain/scopes.ts';
import { MIGRATION_NAMES } from '../../src/storage/migrations.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { Store } from '../../src/domain/store.ts';
import { backends, type Backend } from '../support/backends.ts';
import { POSTGRES_PAIR } from '../support/each-backend.ts';
import { request } from '../support/http-client.ts';
import { SQLITE_PAIR, startTestApp } from '../support/test-app.ts';
import { releaseOneSchema } from './release-1-schema.ts';

/**
 * Databases the first release created upgrade in place: their tables are adopted, not created
 * again, and everything in them reads back through the Store API unchanged.
 */

const NOW = Date.UTC(2026, 5, 1, 12);
const INT64_MAX = 9223372036854775807n;
const HOUR = 3_600_000;
/** Keys issued before scopes existed keep every right. */
const EVERY_SCOPE = ['pets:read', 'pets:write', 'usage:read'];

/** The last migration release 1.2.0 shipped: its databases have keys without scopes. */
const RELEASE_1_2_0_LAST_MIGRATION = '0006-audit-trail';
/** The last migration release 1.3.0 shipped: its audit entries do not say through what. */
const RELEASE_1_3_0_LAST_MIGRATION = '0007-key-scopes';

/** Rows as the first release wrote them; ids are 1, 2, … in a fresh database. */
const RELEASE_ONE_DATA = `
  INSERT INTO pets (name, category_id, status, created_at) VALUES ('Rex', ${INT64_MAX}, 'available', ${NOW});
  INSERT INTO pets (name, category_id, status, created_at) VALUES ('Nobody', -42, NULL, ${NOW + 1});
  INSERT INTO accounts (name, plan, per_minute, per_day, created_at) VALUES ('small', 'free', NULL, NULL, ${NOW});
  INSERT INTO accounts (name, plan, per_minute, per_day, created_at)
    VALUES ('big', 'enterprise', 6000, 5000000000, ${NOW + 2});
  INSERT INTO api_keys (id, account_id, hash, created_at, expires_at, revoked_at, last_used_at)
    VALUES ('kid-revoked', 2, 'hash-revoked', ${NOW}, NULL, ${NOW + 10}, NULL);
  INSERT INTO api_keys (id, account_id, hash, created_at, expires_at, revoked_at, last_used_at)
    VALUES ('kid-expiring', 2, 'hash-expiring', ${NOW + 1}, ${NOW + HOUR}, NULL, NULL);
  INSERT INTO api_keys (id, account_id, hash, created_at, expires_at, revoked_at, last_used_at)
    VALUES ('kid-used', 1, 'hash-used', ${NOW + 2}, NULL, NULL, ${NOW + 20});
  INSERT INTO key_bans (key_id, started_at, until, lifted_at) VALUES ('kid-used', ${NOW}, ${NOW + HOUR}, ${NOW + 5});
  INSERT INTO key_bans (key_id, started_at, until, lifted_at)
    VALUES ('kid-expiring', ${NOW + 6}, ${NOW + 2 * HOUR}, NULL);
  INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, status_code, body)
    VALUES (2, 'idem-1', 'fp-1', ${NOW}, 201, '{"id":1}');
`;

/** The stored text of each key's scopes, by key id, read past the Store API. */
async function storedScopes(backend: Backend, databaseUrl: string): Promise<Map<string, string>> {
  const query = 'SELECT id, scopes FROM api_keys';
  let rows: Array<{ id: string; scopes: string }>;
  if (backend.name === 'sqlite') {
    const database = new DatabaseSync(databaseUrl.slice('sqlite:'.length), { readOnly: true });
    try {
      rows = database.prepare(query).all() as Array<{ id: string; scopes: string }>;
    } finally {
      database.close();
    }
  } else {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      rows = (await client.query<{ id: string; scopes: string }>(query)).rows;
    } finally {
      await client.end();
    }
  }
  return new Map(rows.map((row) => [row.id, row.scopes]));
}

function open(databaseUrl: string): Promise<Store> {
  return openStore({ databaseUrl, pgPoolSize: 4, storageTimeoutMs: 5000 });
}

for (const backend of await backends()) {
  describe(`upgrading a first-release database: ${backend.name}`, { skip: backend.skip }, () => {
    const opened: Store[] = [];
    async function openTracked(url: string): Promise<Store> {
      const store = await open(url);
      opened.push(store);
      return store;
    }

    after(async () => {
      for (const store of opened) await store.close().catch(() => undefined);
      await backend.cleanup();
    });

    it('adopts the tables, applies only later migrations, and reads every record back exactly', async () => {
      const url = await backend.freshDatabaseUrl();
      await backend.execute(url, releaseOneSchema(backend.name) + RELEASE_ONE_DATA);
      const store = await openTracked(url);
      // The first release's two versions are recorded, not created again; only what came later runs.
      assert.equal(await store.migrate(), MIGRATION_NAMES.length - 2);
      assert.equal(await store.migrate(), 0);

      const rex = { id: 1, name: 'Rex', categoryId: INT64_MAX, status: 'available' };
      const nobody = { id: 2, name: 'Nobody', categoryId: -42n, status: null };
      assert.deepEqual(await store.pets.get(1), rex);
      assert.equal((await store.pets.get(1))?.categoryId.toString(), '9223372036854775807');
      assert.deepEqual(await store.pets.get(2), nobody);
      assert.deepEqual(await store.pets.list({ afterId: 0, limit: 10, status: undefined }), [rex, nobody]);
      assert.deepEqual(await store.pets.list({ afterId: 0, limit: 10, status: 'available' }), [rex]);

      // Every account gets the default limit of active keys.
      const small = { id: 1, name: 'small', plan: 'free', perMinute: null, perDay: null, createdAt: NOW, keyLimit: 20 };
      const big = {
        id: 2,
        name: 'big',
        plan: 'enterprise',
        perMinute: 6000,
        perDay: 5_000_000_000,
        createdAt: NOW + 2,
        keyLimit: 20,
      };
      // Keys of earlier releases have no name, and who made or revoked them was not kept.
      const unknownMakers = { name: null, createdBy: null, revokedBy: null };
      assert.deepEqual(await store.accounts.list(), [small, big]);
      assert.deepEqual(await store.accounts.findByName('big'), big);
      assert.equal(await store.accounts.count(), 2);

      const revoked = {
        id: 'kid-revoked',
        ...unknownMakers,
        accountId: 2,
        createdAt: NOW,
        expiresAt: null,
        revokedAt: NOW + 10,
        lastUsedAt: null,
        scopes: EVERY_SCOPE,
        bannedUntil: null,
      };
      const expiring = {
        id: 'kid-expiring',
        ...unknownMakers,
        accountId: 2,
        createdAt: NOW + 1,
        expiresAt: NOW + HOUR,
        revokedAt: null,
        lastUsedAt: null,
        scopes: EVERY_SCOPE,
        bannedUntil: NOW + 2 * HOUR,
      };
      const used = {
        id: 'kid-used',
        ...unknownMakers,
        accountId: 1,
        createdAt: NOW + 2,
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: NOW + 20,
        scopes: EVERY_SCOPE,
        bannedUntil: null,
      };
      assert.deepEqual(await store.keys.listForAccount(2), [revoked, expiring]);
      assert.deepEqual(await store.keys.findById('kid-used'), used);
      assert.deepEqual(await store.keys.findPrincipalByHash('hash-expiring'), {
        keyId: 'kid-expiring',
        accountId: 2,
        accountName: 'big',
        plan: 'enterprise',
        perMinute: 6000,
        perDay: 5_000_000_000,
        expiresAt: NOW + HOUR,
        revokedAt: null,
        scopes: EVERY_SCOPE,
        bannedUntil: NOW + 2 * HOUR,
      });
      assert.equal(await store.bans.countSince('kid-used', NOW), 1, 'a lifted ban still counts for escalation');
      assert.equal(await store.bans.lift('kid-used', NOW + 30), false, 'the lifted ban stays lifted');
      assert.equal(await store.bans.lift('kid-expiring', NOW + 30), true);

      const request = {
        accountId: 2,
        key: 'idem-1',
        fingerprint: 'fp-2',
        respond: () => ({ statusCode: 0, body: '' }),
      };
      const pet = { name: 'Again', categoryId: 1n, status: null };
      assert.deepEqual(await store.pets.createIdempotent(pet, NOW + 40, request), {
        state: 'completed',
        fingerprint: 'fp-1',
        response: { statusCode: 201, body: '{"id":1}' },
      });

      const next = await store.pets.create({ name: 'After', categoryId: 1n, status: 'sold' }, NOW + 50);
      assert.ok(next.id > 2, `a new pet gets a larger id than the adopted ones, got ${next.id}`);
      assert.deepEqual(await store.pets.get(next.id), next);
      const account = await store.accounts.create({ name: 'new', plan: 'pro', perMinute: null, perDay: null }, NOW);
      assert.equal(account.id, 3);

      // The tables of later migrations are there: an operator token, and a console session of it.
      await store.operatorTokens.create({ id: 'tok', hash: 'h', name: null }, NOW);
      await store.operatorSessions.start({ hash: 'session', tokenId: 'tok' }, NOW);
      assert.equal((await store.operatorSessions.find('session'))?.token.id, 'tok');
      // The tables of later migrations are there and empty: the audit trail starts with the upgrade.
      assert.deepEqual(await store.audit.list({ limit: 10 }), []);
      const revocation = {
        at: NOW + 60,
        actor: { kind: 'cli', user: 'upgrader' },
        via: 'cli',
        requestId: null,
        action: 'key.revoke',
        target: { type: 'key', id: 'kid-used' },
        before: { revokedAt: null },
        after: { revokedAt: new Date(NOW + 60).toISOString() },
      } as const;
      await store.audit.change(async ({ keys }) => ({
        result: await keys.revoke('kid-used', NOW + 60),
        entry: revocation,
      }));
      assert.equal((await store.keys.findById('kid-used'))?.revokedAt, NOW + 60);
      assert.deepEqual(
        (await store.audit.list({ limit: 10 })).map((entry) => ({ ...entry, id: 0 })),
        [{ ...revocation, id: 0 }],
      );
    });

    it('keys of a release 1.2.0 database hold every scope once upgraded, and are served every operation', async () => {
      const url = await backend.freshDatabaseUrl();
      const released = await openTracked(url);
      assert.equal(await released.migrate(RELEASE_1_2_0_LAST_MIGRATION), 6);
      const keys = [generateApiKey(), generateApiKey()];
      // As release 1.2.0 wrote an account and its keys: no scopes column yet.
      await backend.execute(
        url,
        `INSERT INTO accounts (name, plan, per_minute, per_day, created_at)
         VALUES ('old', 'free', NULL, NULL, ${NOW});` +
          keys
            .map(
              (key, index) =>
                `INSERT INTO api_keys (id, account_id, hash, created_at, expires_at, revoked_at, last_used_at)
                 SELECT 'kid-old-${index}', id, '${hashApiKey(key)}', ${NOW}, NULL, NULL, NULL FROM accounts;`,
            )
            .join(''),
      );
      // The current release starts on it, and applies what came after 1.2.0.
      const pair = backend.name === 'sqlite' ? SQLITE_PAIR : POSTGRES_PAIR;
      const app = await startTestApp({ backend: pair, env: { DATABASE_URL: url } });
      try {
        assert.equal(await app.services.store.migrate(), 0, 'the start applied every later migration');
        for (const key of keys) {
          assert.deepEqual((await app.services.store.keys.findPrincipalByHash(hashApiKey(key)))?.scopes, EVERY_SCOPE);
          const created = await request(app, '/v1/pets', { method: 'POST', key, json: { name: 'Old', categoryId: 1 } });
          assert.equal(created.status, 201, created.text);
          const id = created.json<{ id: number }>().id;
          for (const path of ['/v1/pets', `/v1/pets/${id}`, '/v1/usage/history']) {
            const answer = await request(app, path, { key });
            assert.equal(answer.status, 200, `${path}: ${answer.text}`);
          }
          const usage = await request(app, '/v1/usage', { key });
          assert.equal(usage.status, 200, usage.text);
          assert.deepEqual(usage.json<{ key: { scopes: string[] } }>().key.scopes, EVERY_SCOPE);
        }
      } finally {
        await app.close();
      }
    });

    it("entries of a release 1.3.0 database say through what: a token's api, the CLI's cli", async () => {
      const url = await backend.freshDatabaseUrl();
      const released = await openTracked(url);
      assert.equal(await released.migrate(RELEASE_1_3_0_LAST_MIGRATION), 7);
      /** An entry as release 1.3.0 wrote it, without the column; the same, with it left to its default. */
      const oldEntry = (at: number, kind: 'operator_token' | 'cli', id: string): string =>
        `INSERT INTO audit_entries (at, actor_kind, actor_id, actor_name, action, target_type, target_id,
           before, after, request_id)
         VALUES (${at}, '${kind}', '${id}', NULL, 'account.create', 'account', 'acme', NULL, '{}', NULL);`;
      await backend.execute(url, oldEntry(NOW, 'operator_token', 'AbCdEfGh01234567') + oldEntry(NOW + 1, 'cli', 'bob'));
      assert.equal(await released.migrate(), MIGRATION_NAMES.length - 7);
      const vias = async (): Promise<string[]> =>
        (await released.audit.list({ limit: 10 })).map((entry) => `${entry.actor.kind} ${entry.via}`);
      assert.deepEqual(await vias(), ['cli cli', 'operator_token api']);
      // During a rolling upgrade, an instance and a CLI of release 1.3.0 still write entries without the column.
      await backend.execute(
        url,
        oldEntry(NOW + 2, 'operator_token', 'AbCdEfGh01234567') + oldEntry(NOW + 3, 'cli', 'carol'),
      );
      assert.deepEqual(await vias(), ['cli cli', 'operator_token api', 'cli cli', 'operator_token api']);
      const counted = async (via: 'console' | 'api' | 'cli'): Promise<number> =>
        (await released.audit.list({ via, limit: 10 })).length;
      assert.deepEqual([await counted('console'), await counted('api'), await counted('cli')], [0, 2, 2]);
    });

    it('keys of a 1.3.0 database that hold every scope keep every scope, one added later included', async () => {
      const url = await backend.freshDatabaseUrl();
      const store = await openTracked(url);
      assert.equal(await store.migrate(RELEASE_1_3_0_LAST_MIGRATION), 7);
      const account = await store.accounts.create({ name: 'old', plan: 'free', perMinute: null, perDay: null }, NOW);
      // As release 1.3.0 stored them: every scope by name (issued without a choice, or with all three), or some.
      const released = { every: 'pets:read pets:write usage:read', some: 'usage:read pets:read', one: 'pets:write' };
      await backend.execute(
        url,
        Object.entries(released)
          .map(
            ([id, scopes]) => `INSERT INTO api_keys (id, account_id, hash, created_at, expires_at, scopes)
               VALUES ('${id}', ${account.id}, 'hash-${id}', ${NOW}, NULL, '${scopes}');`,
          )
          .join(''),
      );
      await store.migrate();
      // Keys issued by this release: without a choice, and with every scope named.
      await store.keys.create({ id: 'unchosen', accountId: account.id, hash: 'hash-unchosen', expiresAt: null }, NOW);
      const named = { id: 'named', accountId: account.id, hash: 'hash-named', expiresAt: null, scopes: ALL_SCOPES };
      await store.keys.create(named, NOW);

      const stored = await storedScopes(backend, url);
      const marked = 'all pets:read pets:write usage:read';
      assert.deepEqual(
        stored,
        new Map([
          ['every', marked],
          ['some', 'usage:read pets:read'],
          ['one', 'pets:write'],
          ['unchosen', marked],
          ['named', 'pets:read pets:write usage:read'],
        ]),
      );
      // This release reads every key as it did: the views show the scopes a key holds.
      const read = new Map((await store.keys.listForAccount(account.id)).map((key) => [key.id, key.scopes]));
      assert.deepEqual(read.get('every'), EVERY_SCOPE);
      assert.deepEqual(read.get('unchosen'), EVERY_SCOPE);
      assert.deepEqual(read.get('named'), EVERY_SCOPE);
      assert.deepEqual(read.get('some'), ['pets:read', 'usage:read']);
      assert.deepEqual((await store.keys.findPrincipalByHash('hash-every'))?.scopes, EVERY_SCOPE);
      // A release with a fourth scope reads the same texts: the marked keys hold it, the others do not.
      const later = scopeReader([...KEY_SCOPES, 'pets:delete'], NEVER_IMPLIED);
      const laterScopes = new Map([...stored].map(([id, text]) => [id, later(text)]));
      assert.deepEqual(laterScopes.get('every'), [...EVERY_SCOPE, 'pets:delete']);
      assert.deepEqual(laterScopes.get('unchosen'), [...EVERY_SCOPE, 'pets:delete']);
      assert.deepEqual(laterScopes.get('named'), EVERY_SCOPE);
      assert.deepEqual(laterScopes.get('one'), ['pets:write']);
    });

    it('refuses to migrate through a migration that does not exist, naming those that do', async () => {
      const store = await openTracked(await backend.freshDatabaseUrl());
      await assert.rejects(store.migrate('0006-audit'), /no migration is named '0006-audit'.*0006-audit-trail/);
      assert.equal(await store.migrate(), MIGRATION_NAMES.length, 'nothing was applied');
    });

    it('a database at release version 1 is adopted and then gets the bans table', async () => {
      const url = await backend.freshDatabaseUrl();
      await backend.execute(url, releaseOneSchema(backend.name, 1));
      const store = await openTracked(url);
      assert.equal(await store.migrate(), MIGRATION_NAMES.length - 1);
      const account = await store.accounts.create({ name: 'a', plan: 'free', perMinute: null, perDay: null }, NOW);
      await store.keys.create({ id: 'k', accountId: account.id, hash: 'h', expiresAt: null }, NOW);
      await store.bans.ban('k', NOW, NOW + HOUR);
      assert.equal((await store.keys.findById('k'))?.bannedUntil, NOW + HOUR);
    });

    it('migrating a fresh database twice applies nothing the second time', async () => {
      const store = await openTracked(await backend.freshDatabaseUrl());
      assert.equal(await store.migrate(), MIGRATION_NAMES.length);
      assert.equal(await store.migrate(), 0);
    });

    it('two instances migrating at once both succeed and apply each migration once', async () => {
      const url = await backend.freshDatabaseUrl();
      const [first, second] = [await openTracked(url), await openTracked(url)];
      const counts = await Promise.all([first.migrate(), second.migrate()]);
      assert.deepEqual(
        counts.sort((a, b) => a - b),
        [0, MIGRATION_NAMES.length],
      );
      const pet = await first.pets.create({ name: 'shared', categoryId: 1n, status: null }, NOW);
      assert.deepEqual(await second.pets.get(pet.id), pet);
    });
  });
}
