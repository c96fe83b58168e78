import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OPERATOR_TOKEN_PREFIX, OperatorTokenService } from '../../src/auth/operator-tokens.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../src/errors.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { Store } from '../../src/domain/store.ts';
import { backends } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';

/**
 * The operator token store and what the admin API reads in one query (bans in force, keys per
 * account), as one contract for both backends; and the token service over it: the token's format,
 * its verification (constant-time, storage read each time, so a revocation holds at once) and its
 * listing.
 */

const NOW = Date.UTC(2026, 5, 1, 12);
const TOKEN = /^pso_([0-9A-Za-z]{16})_[0-9A-Za-z]{32}$/;

let unique = 0;
function name(prefix: string): string {
  unique += 1;
  return `${prefix}-${unique}`;
}

/** Resolves once background writes had their chance (they are not awaited by verify). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

for (const backend of await backends()) {
  describe(`operator tokens and admin reads: ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;

    before(async () => {
      store = await openStore({ databaseUrl: backend.databaseUrl, pgPoolSize: 4, storageTimeoutMs: 5000 });
      await store.migrate();
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    describe('OperatorTokenStore', () => {
      it('creates, finds with the hash, lists oldest first, and refuses a taken id', async () => {
        const first = await store.operatorTokens.create({ id: name('tok'), hash: 'h1', name: 'alice' }, NOW);
        const second = await store.operatorTokens.create({ id: name('tok'), hash: 'h2', name: null }, NOW + 1);
        assert.deepEqual(first, { id: first.id, name: 'alice', createdAt: NOW, revokedAt: null, lastUsedAt: null });
        assert.equal('hash' in first, false, 'a created record carries no hash');
        assert.deepEqual(await store.operatorTokens.findById(first.id), { ...first, hash: 'h1' });
        assert.equal(await store.operatorTokens.findById('missing'), undefined);
        const listed = await store.operatorTokens.list();
        const ids = listed.map((token) => token.id);
        assert.ok(ids.indexOf(first.id) < ids.indexOf(second.id), 'oldest first');
        assert.ok(
          listed.every((token) => !('hash' in token)),
          'a listing carries no hash',
        );
        await assert.rejects(
          store.operatorTokens.create({ id: first.id, hash: 'h3', name: null }, NOW),
          (error: unknown) => error instanceof ConflictError,
        );
      });

      it('revokes once: the first time is kept; an unknown id is false', async () => {
        const token = await store.operatorTokens.create({ id: name('tok'), hash: 'h', name: null }, NOW);
        assert.equal(await store.operatorTokens.revoke(token.id, NOW + 10), true);
        assert.equal(await store.operatorTokens.revoke(token.id, NOW + 20), true);
        assert.equal((await store.operatorTokens.findById(token.id))?.revokedAt, NOW + 10);
        assert.equal(await store.operatorTokens.revoke('missing', NOW), false);
      });

      it('records the last use; a time never moves back', async () => {
        const token = await store.operatorTokens.create({ id: name('tok'), hash: 'h', name: null }, NOW);
        assert.equal(await store.operatorTokens.recordLastUsed(token.id, NOW + 100, 'waiting'), true);
        await store.operatorTokens.recordLastUsed(token.id, NOW + 50, 'waiting');
        assert.equal((await store.operatorTokens.findById(token.id))?.lastUsedAt, NOW + 100);
      });
    });

    describe('reads of the admin API', () => {
      it('BanStore.listActive: bans in force, one per key (its latest), with the account, newest first', async () => {
        const account = await store.accounts.create(
          { name: name('acct'), plan: 'free', perMinute: null, perDay: null },
          NOW,
        );
        const keyOf = async (): Promise<string> =>
          (
            await store.keys.create(
              { id: name('key'), accountId: account.id, hash: name('hash'), expiresAt: null },
              NOW,
            )
          ).id;
        const [old, twice, lifted, over] = [await keyOf(), await keyOf(), await keyOf(), await keyOf()];
        const at = NOW + 1_000_000;
        await store.bans.ban(old, at - 500, at + 60_000);
        await store.bans.ban(twice, at - 400, at + 30_000);
        await store.bans.ban(twice, at - 100, at + 90_000);
        await store.bans.ban(lifted, at - 50, at + 60_000);
        await store.bans.lift(lifted, at - 10);
        await store.bans.ban(over, at - 90_000, at - 1);
        const active = (await store.bans.listActive(at)).filter((ban) =>
          [old, twice, lifted, over].includes(ban.keyId),
        );
        assert.deepEqual(active, [
          { keyId: twice, account: account.name, startedAt: at - 100, until: at + 90_000 },
          { keyId: old, account: account.name, startedAt: at - 500, until: at + 60_000 },
        ]);
      });

      it('AccountStore.keyStats: keys, usable keys and the latest use per account, in one query', async () => {
        const plan = { plan: 'free' as const, perMinute: null, perDay: null };
        const busy = await store.accounts.create({ name: name('acct'), ...plan }, NOW);
        const idle = await store.accounts.create({ name: name('acct'), ...plan }, NOW);
        const key = (expiresAt: number | null) =>
          store.keys.create({ id: name('key'), accountId: busy.id, hash: name('hash'), expiresAt }, NOW);
        const usable = await key(null);
        const revoked = await key(null);
        await key(NOW + 10);
        await key(NOW + 1000);
        await store.keys.revoke(revoked.id, NOW);
        await store.keys.recordLastUsed(
          new Map([
            [usable.id, NOW + 5],
            [revoked.id, NOW + 7],
          ]),
          'waiting',
        );
        const stats = await store.accounts.keyStats(NOW + 100);
        assert.deepEqual(stats.get(busy.id), { total: 4, active: 2, lastUsedAt: NOW + 7 });
        assert.equal(stats.get(idle.id), undefined, 'an account without keys is absent');
      });
    });

    describe('OperatorTokenService', () => {
      it('creates pso_<id>_<secret> tokens, stores only a hash, shows the plaintext once', async () => {
        const service = new OperatorTokenService(store, new ManualClock(NOW));
        const { token, record } = await service.create('bob');
        const match = TOKEN.exec(token);
        assert.ok(match, token);
        assert.ok(token.startsWith(OPERATOR_TOKEN_PREFIX));
        assert.equal(match[1], record.id);
        assert.equal(record.name, 'bob');
        const stored = await store.operatorTokens.findById(record.id);
        assert.ok(stored && !token.includes(stored.hash) && !stored.hash.includes(token.slice(21)));
        const other = await service.create();
        assert.notEqual(other.token, token);
        assert.equal(other.record.name, null);
      });

      it('verifies a valid token and refuses a wrong secret, an unknown id, a malformed or revoked one', async () => {
        const clock = new ManualClock(NOW);
        const service = new OperatorTokenService(store, clock);
        const { token, record } = await service.create('carol');
        const verdict = await service.verify(token);
        assert.deepEqual(verdict, { ok: true, token: record });
        const wrongSecret = `${token.slice(0, 21)}${token.slice(21).split('').reverse().join('')}`;
        const cases: ReadonlyArray<readonly [string, string]> = [
          [wrongSecret, 'wrong_secret'],
          [`pso_${'Z'.repeat(16)}_${token.slice(21)}`, 'unknown'],
          [token.slice(0, -1), 'malformed'],
          [`${token}x`, 'malformed'],
          ['', 'malformed'],
          [token.replace('pso_', 'pst_'), 'malformed'],
        ];
        for (const [presented, reason] of cases) {
          assert.deepEqual(await service.verify(presented), { ok: false, reason }, presented);
        }
        // The use is written in the background, at most once a minute.
        await settle();
        assert.equal((await store.operatorTokens.findById(record.id))?.lastUsedAt, NOW);
        clock.advance(30_000);
        await service.verify(token);
        await settle();
        assert.equal((await store.operatorTokens.findById(record.id))?.lastUsedAt, NOW);
        clock.advance(30_000);
        await service.verify(token);
        await settle();
        assert.equal((await store.operatorTokens.findById(record.id))?.lastUsedAt, NOW + 60_000);
        // A revocation holds at once: nothing is cached.
        const revoked = await service.revoke(record.id);
        assert.equal(revoked.revokedAt, NOW + 60_000);
        assert.equal('hash' in revoked, false);
        assert.deepEqual(await service.verify(token), { ok: false, reason: 'revoked' });
        assert.ok((await service.list()).some((listed) => listed.id === record.id && listed.revokedAt !== null));
      });

      it('refuses to revoke an unknown id and a label it cannot show', async () => {
        const service = new OperatorTokenService(store, new ManualClock(NOW));
        await assert.rejects(service.revoke('nope'), (error: unknown) => error instanceof NotFoundError);
        await assert.rejects(service.revoke('Z'.repeat(16)), (error: unknown) => error instanceof NotFoundError);
        for (const label of ['', 'x'.repeat(65), 'a\u001b[31mb', 'line\nbreak']) {
          await assert.rejects(service.create(label), (error: unknown) => error instanceof ValidationError, label);
        }
      });
    });
  });
}
