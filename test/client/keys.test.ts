import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { PetstoreClient } from '@petstore/client';
import { PetstoreError, type CreatedKey, type Key, type KeyCreateError } from '@petstore/client';
import { appForSuite } from '../support/suite-app.ts';
import { clientOf } from './client-fixtures.ts';

/** The instant of the test app's manual clock, which no test here moves. */
const NOW = Date.parse('2026-06-01T12:00:00.000Z');

describe('client: keys', () => {
  const app = appForSuite();

  async function managerClient(): Promise<{ client: PetstoreClient; keyId: string; account: string }> {
    const { key, keyId, account } = await app.newKey({ scopes: ['pets:read', 'keys:manage'] });
    return { client: clientOf(app, key), keyId, account };
  }

  it('creates, lists page after page, rolls and revokes keys', async () => {
    const { client, keyId } = await managerClient();
    const made: CreatedKey = await client.keys.create({
      name: 'reader',
      scopes: ['pets:read'],
      expiresInSeconds: 3600,
    });
    assert.match(made.key, /^pst_/);
    assert.deepEqual(
      [made.name, made.createdBy, made.expiresAt],
      ['reader', { kind: 'key', id: keyId }, new Date(NOW + 3_600_000).toISOString()],
    );
    const reader = clientOf(app, made.key);
    assert.ok(Array.isArray((await reader.pets.listPage()).pets), 'the new key works');

    const rolled = await client.keys.roll(made.id, { gracePeriodSeconds: 0 });
    assert.deepEqual([rolled.name, rolled.scopes], ['reader', ['pets:read']]);
    await assert.rejects(
      reader.pets.listPage(),
      (error: unknown) => error instanceof PetstoreError && error.status === 401,
    );

    const revoked: Key = await client.keys.revoke(rolled.id);
    assert.deepEqual(revoked.revokedBy, { kind: 'key', id: keyId });

    const all: Key[] = [];
    for await (const key of client.keys.list({ limit: 1 })) all.push(key);
    assert.deepEqual(all.map((key) => key.id).sort(), [keyId, made.id, rolled.id].sort());
    assert.ok(
      all.every((key) => !('key' in key)),
      'no secret in a listing',
    );
    const page = await client.withResponse.keys.listPage({ limit: 2 });
    assert.equal(page.status, 200);
    assert.equal(page.data.keys.length, 2);
    assert.ok(page.data.nextCursor !== undefined);
  });

  it('throws errors that narrow by code: insufficient_scope naming the scope, key_limit, not_found', async () => {
    const { client, account } = await managerClient();
    const codeOf = async (call: Promise<unknown>): Promise<string> => {
      try {
        await call;
      } catch (error) {
        if (!(error instanceof PetstoreError)) throw error;
        if (error.code === 'insufficient_scope' || error.code === 'key_limit') {
          const narrowed: KeyCreateError = error;
          return `${narrowed.code} ${narrowed.status}`;
        }
        return `${error.code} ${error.status}`;
      }
      return 'no error';
    };
    assert.equal(
      await codeOf(client.keys.create({ name: 'writer', scopes: ['pets:write'] })),
      'insufficient_scope 403',
    );
    await app.services.accounts.setKeyLimit(account, 1);
    assert.equal(await codeOf(client.keys.create({ name: 'more', scopes: ['pets:read'] })), 'key_limit 409');
    assert.equal(await codeOf(client.keys.revoke('key_notInThisAccount')), 'not_found 404');
    assert.equal(await codeOf(client.keys.roll('key_notInThisAccount')), 'not_found 404');
  });

  it('sends one Idempotency-Key with every retry of a creation, so a retried call makes one key', async () => {
    const { key, account } = await app.newKey({ scopes: ['pets:read', 'keys:manage'] });
    let failFirst = true;
    const client = clientOf(app, key, {
      sleep: async () => undefined,
      // The first answer is lost after the service made the key: the retry must be answered the same key.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (failFirst && init?.method === 'POST') {
          failFirst = false;
          throw new TypeError('connection reset');
        }
        return response;
      },
    });
    const made = await client.keys.create({ name: 'once', scopes: ['pets:read'] });
    const keys = await app.services.accounts.listKeys(account);
    assert.equal(keys.filter((stored) => stored.name === 'once').length, 1, 'one key was made');
    assert.equal(keys.find((stored) => stored.name === 'once')?.id, made.id);
  });

  it('examples/roll-key.ts rolls a key and revokes the old one, as docs/api.md tells after a leak', async () => {
    const { key } = await app.newKey({ scopes: ['pets:read', 'keys:manage'] });
    const root = join(import.meta.dirname, '..', '..');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@petstore/source', join(root, 'examples', 'roll-key.ts')],
      { cwd: root, env: { ...process.env, PETSTORE_URL: `${app.url}/v1`, PETSTORE_API_KEY: key } },
    );
    const [, leaked = ''] = /^created (key_\S+) inventory-service pets:read$/m.exec(stdout) ?? [];
    assert.ok(leaked !== '', stdout);
    assert.match(stdout, new RegExp(`^rolled ${leaked} into key_\\S+ inventory-service pets:read$`, 'm'));
    assert.match(stdout, /^the new key works: true$/m);
    assert.match(stdout, new RegExp(`^revoked ${leaked} at \\d{4}-`, 'm'));
    assert.match(stdout, new RegExp(`^key ${leaked} inventory-service revoked$`, 'm'));
  });
});
