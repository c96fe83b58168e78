import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError } from '../../src/errors.ts';
import type { AuditEntryRecord, NewAuditEntry } from '../../src/domain/audit.ts';
import type { Store } from '../../src/domain/store.ts';
import { describeStoreContract, name, NOW } from './store-contract-suite.ts';

/**
 * The Store contract (test/storage/store-contract-suite.ts), on every backend: the operators' console
 * sessions and the audit trail of their changes.
 */

await describeStoreContract(({ store, openFresh }) => {
  describe('operator sessions', () => {
    async function newToken(): Promise<string> {
      return (await store().operatorTokens.create({ id: name('tok'), hash: name('h'), name: 'ops' }, NOW)).id;
    }

    it('starts a session by its hash and finds it with its token, in one read', async () => {
      const tokenId = await newToken();
      const hash = name('session');
      await store().operatorSessions.start({ hash, tokenId }, NOW + 5);
      assert.deepEqual(await store().operatorSessions.find(hash), {
        startedAt: NOW + 5,
        lastSeenAt: NOW + 5,
        endedAt: null,
        token: { id: tokenId, name: 'ops', createdAt: NOW, revokedAt: null, lastUsedAt: null },
      });
      assert.equal(await store().operatorSessions.find('no-such-session'), undefined);
      await assert.rejects(
        store().operatorSessions.start({ hash, tokenId }, NOW),
        (error: unknown) => error instanceof ConflictError,
      );
      // The token as it is now: its revocation shows on the session's next read.
      await store().operatorTokens.revoke(tokenId, NOW + 9);
      assert.equal((await store().operatorSessions.find(hash))?.token.revokedAt, NOW + 9);
    });

    it('records uses forward only, and none once ended; ends once, keeping the first time', async () => {
      const tokenId = await newToken();
      const hash = name('session');
      await store().operatorSessions.start({ hash, tokenId }, NOW);
      assert.equal(await store().operatorSessions.touch(hash, NOW + 100), true);
      assert.equal(await store().operatorSessions.touch(hash, NOW + 50), false);
      assert.equal((await store().operatorSessions.find(hash))?.lastSeenAt, NOW + 100);
      assert.equal(await store().operatorSessions.end(hash, NOW + 200), true);
      assert.equal(await store().operatorSessions.end(hash, NOW + 300), false);
      assert.equal(await store().operatorSessions.touch(hash, NOW + 400), false);
      const ended = await store().operatorSessions.find(hash);
      assert.deepEqual([ended?.lastSeenAt, ended?.endedAt], [NOW + 100, NOW + 200]);
      assert.equal(await store().operatorSessions.end('no-such-session', NOW), false);
      assert.equal(await store().operatorSessions.touch('no-such-session', NOW), false);
    });

    it("ends every open session of a token, and only that token's", async () => {
      const [tokenId, otherId] = [await newToken(), await newToken()];
      const [open1, open2, ended, other] = [name('s'), name('s'), name('s'), name('s')];
      for (const hash of [open1, open2, ended]) await store().operatorSessions.start({ hash, tokenId }, NOW);
      await store().operatorSessions.start({ hash: other, tokenId: otherId }, NOW);
      await store().operatorSessions.end(ended, NOW + 1);
      assert.equal(await store().operatorSessions.endForToken(tokenId, NOW + 10), 2);
      assert.equal(await store().operatorSessions.endForToken(tokenId, NOW + 20), 0);
      for (const [hash, endedAt] of [
        [open1, NOW + 10],
        [open2, NOW + 10],
        [ended, NOW + 1],
        [other, null],
      ] as const) {
        assert.equal((await store().operatorSessions.find(hash))?.endedAt, endedAt, hash);
      }
    });

    it('purges sessions ended, last seen or started before the cutoffs, and keeps the others', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      const tokenId = (await fresh.operatorTokens.create({ id: 'tok', hash: 'h', name: null }, NOW)).id;
      const start = (hash: string, at: number) => fresh.operatorSessions.start({ hash, tokenId }, at);
      await start('ended-early', NOW);
      await fresh.operatorSessions.end('ended-early', NOW + 10);
      await start('idle', NOW);
      await start('long', NOW - 1000);
      await fresh.operatorSessions.touch('long', NOW + 500);
      await start('kept', NOW + 100);
      await fresh.operatorSessions.end('kept', NOW + 200);
      const cutoffs = { endedBefore: NOW + 100, lastSeenBefore: NOW + 1, startedBefore: NOW - 500 };
      assert.equal(await fresh.operatorSessions.purge(cutoffs), 3);
      for (const hash of ['ended-early', 'idle', 'long'])
        assert.equal(await fresh.operatorSessions.find(hash), undefined, hash);
      assert.ok(await fresh.operatorSessions.find('kept'));
      assert.equal(await fresh.operatorSessions.purge(cutoffs), 0);
    });
  });

  describe('audit trail', () => {
    const byToken = {
      actor: { kind: 'operator_token', id: 'AbCdEfGh01234567', name: 'ops' },
      via: 'api',
      requestId: 'req-1',
    };
    const byCli = { actor: { kind: 'cli', user: 'alice' }, via: 'cli', requestId: null };
    const entry = (at: number, fields: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
      at,
      ...(byToken as Pick<NewAuditEntry, 'actor' | 'via' | 'requestId'>),
      action: 'account.update',
      target: { type: 'account', id: 'acme' },
      before: { plan: 'free', limits: { perMinute: 60, perDay: 1000 } },
      after: { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } },
      ...fields,
    });
    const withoutIds = (entries: readonly AuditEntryRecord[]) =>
      entries.map((stored) => Object.fromEntries(Object.entries(stored).filter(([field]) => field !== 'id')));

    it('stores the entry in the transaction of its change: both are written, or neither', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      const written = entry(NOW, { action: 'account.create', target: { type: 'account', id: 'acme' }, before: null });
      const account = await fresh.audit.change(async ({ accounts }) => {
        const created = await accounts.create({ name: 'acme', plan: 'pro', perMinute: null, perDay: null }, NOW);
        assert.deepEqual(await accounts.findByName('acme'), created, 'the change reads its own writes');
        return { result: created, entry: written };
      });
      assert.deepEqual(await fresh.accounts.findByName('acme'), account);
      const [stored, ...more] = await fresh.audit.list({ limit: 10 });
      assert.deepEqual(more, []);
      assert.ok(stored !== undefined && Number.isSafeInteger(stored.id) && stored.id > 0);
      assert.deepEqual(withoutIds([stored]), [written]);

      // A change that fails after writing leaves neither its write nor its entry.
      await assert.rejects(
        fresh.audit.change(async ({ accounts }) => {
          await accounts.create({ name: 'ghost', plan: 'free', perMinute: null, perDay: null }, NOW);
          throw new Error('the change fails half-way');
        }),
        /half-way/,
      );
      // A write the store refuses (a taken name) writes no entry either.
      await assert.rejects(
        fresh.audit.change(async ({ accounts }) => ({
          result: await accounts.create({ name: 'acme', plan: 'free', perMinute: null, perDay: null }, NOW),
          entry: entry(NOW + 1),
        })),
        ConflictError,
      );
      assert.equal(await fresh.accounts.findByName('ghost'), undefined);
      assert.equal((await fresh.audit.list({ limit: 10 })).length, 1);

      // Without an entry the change commits alone; a record stands on its own.
      await fresh.audit.change(async ({ keys }) => ({
        result: await keys.create({ id: 'k-plain', accountId: account.id, hash: 'h-plain', expiresAt: null }, NOW),
        entry: undefined,
      }));
      assert.equal((await fresh.keys.findById('k-plain'))?.id, 'k-plain');
      await fresh.audit.record(entry(NOW + 2, { action: 'ban.lift', target: { type: 'key', id: 'k-plain' } }));
      assert.deepEqual(
        (await fresh.audit.list({ limit: 10 })).map((stored) => stored.action),
        ['ban.lift', 'account.create'],
      );
    });

    it('filters by actor, target, action, via and time, newest first, and pages by position', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      const cli = byCli as Pick<NewAuditEntry, 'actor' | 'via' | 'requestId'>;
      const bob = { actor: { kind: 'cli', user: 'bob' }, via: 'cli', requestId: null } as Pick<
        NewAuditEntry,
        'actor' | 'via' | 'requestId'
      >;
      const written = [
        entry(NOW),
        entry(NOW + 1000, { ...cli, action: 'key.create', target: { type: 'key', id: 'key_1' }, before: null }),
        entry(NOW + 1000, { ...bob, action: 'key.revoke', target: { type: 'key', id: 'key_1' } }),
        entry(NOW + 2000, { via: 'console', target: { type: 'account', id: 'other' } }),
        entry(NOW + 3000, {
          action: 'operator_token.revoke',
          target: { type: 'operator_token', id: 'Zz00000000000000' },
          before: { revokedAt: null },
          after: { revokedAt: new Date(NOW + 3000).toISOString() },
        }),
      ];
      for (const one of written) await fresh.audit.record(one);
      const all = await fresh.audit.list({ limit: 100 });
      // Newest first; of two at the same time, the later written first.
      assert.deepEqual(withoutIds(all), [written[4], written[3], written[2], written[1], written[0]]);
      const actions = async (query: Omit<Parameters<Store['audit']['list']>[0], 'limit'>) =>
        (await fresh.audit.list({ ...query, limit: 100 })).map((stored) => `${stored.action} ${stored.target.id}`);
      assert.deepEqual(await actions({ actor: { kind: 'cli' } }), ['key.revoke key_1', 'key.create key_1']);
      assert.deepEqual(await actions({ actor: { kind: 'cli', id: 'alice' } }), ['key.create key_1']);
      assert.deepEqual(await actions({ actor: { kind: 'operator_token', id: 'AbCdEfGh01234567' } }), [
        'operator_token.revoke Zz00000000000000',
        'account.update other',
        'account.update acme',
      ]);
      assert.deepEqual(await actions({ actor: { kind: 'operator_token', id: 'AbCdEfGh0123456X' } }), []);
      assert.deepEqual(await actions({ target: { type: 'account', id: 'acme' } }), ['account.update acme']);
      assert.deepEqual(await actions({ target: { type: 'key' } }), ['key.revoke key_1', 'key.create key_1']);
      assert.deepEqual(await actions({ action: 'account.update' }), ['account.update other', 'account.update acme']);
      assert.deepEqual(await actions({ via: 'console' }), ['account.update other']);
      assert.deepEqual(await actions({ via: 'api' }), [
        'operator_token.revoke Zz00000000000000',
        'account.update acme',
      ]);
      assert.deepEqual(await actions({ via: 'cli' }), ['key.revoke key_1', 'key.create key_1']);
      assert.deepEqual(await actions({ from: NOW + 1000, to: NOW + 3000 }), [
        'account.update other',
        'key.revoke key_1',
        'key.create key_1',
      ]);
      assert.deepEqual(await actions({ action: 'account.update', from: NOW + 1, target: { type: 'account' } }), [
        'account.update other',
      ]);

      // Pages of two, each after the last entry of the one before: every entry once, in order.
      const pages: AuditEntryRecord[][] = [];
      let olderThan: { at: number; id: number } | undefined;
      for (;;) {
        const page = await fresh.audit.list({ limit: 2, ...(olderThan === undefined ? {} : { olderThan }) });
        if (page.length === 0) break;
        pages.push(page);
        const last = page.at(-1) as AuditEntryRecord;
        olderThan = { at: last.at, id: last.id };
      }
      assert.deepEqual(
        pages.map((page) => page.length),
        [2, 2, 1],
      );
      assert.deepEqual(pages.flat(), all);
      const [, second] = all as [AuditEntryRecord, AuditEntryRecord];
      assert.deepEqual(await actions({ actor: { kind: 'cli' }, olderThan: { at: second.at, id: second.id } }), [
        'key.revoke key_1',
        'key.create key_1',
      ]);
    });

    it('a change reads the values it replaces, however many change the same row at once', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      await fresh.accounts.create({ name: 'contended', plan: 'enterprise', perMinute: 1, perDay: 1 }, NOW);
      const changes = Array.from({ length: 8 }, (_unused, index) =>
        fresh.audit.change(async ({ accounts }) => {
          const found = await accounts.findByName('contended');
          // Gives the others time to read the row before this one writes it, were it not locked.
          await new Promise((resolve) => setTimeout(resolve, 5));
          const changed = await accounts.setPlan('contended', 'enterprise', {
            perMinute: index + 2,
            perDay: index + 2,
          });
          return {
            result: changed,
            entry: entry(NOW, { before: { perMinute: found?.perMinute ?? null }, after: { perMinute: index + 2 } }),
          };
        }),
      );
      await Promise.all(changes);
      const stored = await fresh.audit.list({ limit: 100 });
      // Each change replaced what the one before it wrote: the befores are the first value and all afters but one.
      const befores = stored.map((one) => one.before?.perMinute).sort();
      const afters = stored.map((one) => one.after?.perMinute);
      const last = (await fresh.accounts.findByName('contended'))?.perMinute;
      assert.deepEqual(befores, [1, ...afters.filter((value) => value !== last)].sort(), JSON.stringify(stored));
    });

    it('purges the entries before a time and reports how many', async () => {
      const fresh = await openFresh();
      await fresh.migrate();
      for (const at of [NOW - 2000, NOW - 1000, NOW]) await fresh.audit.record(entry(at));
      assert.equal(await fresh.audit.purge(NOW - 1000), 1);
      assert.equal(await fresh.audit.purge(NOW - 1000), 0);
      assert.deepEqual(
        (await fresh.audit.list({ limit: 10 })).map((stored) => stored.at),
        [NOW, NOW - 1000],
      );
    });
  });
});
