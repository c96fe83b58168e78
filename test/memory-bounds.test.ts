import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccountService } from '../src/auth/account-service.ts';
import { generateApiKey } from '../src/auth/api-key.ts';
import { KeyVerifier } from '../src/auth/key-verifier.ts';
import { GET_PET_SUNSET } from '../src/config.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import { PetService, type PetPage } from '../src/pets/pet-service.ts';
import type { WindowSpec } from '../src/ratelimit/limiter.ts';
import { MemoryLimiter } from '../src/ratelimit/memory-limiter.ts';
import { openStore } from '../src/storage/open-store.ts';
import type { PetRecord } from '../src/domain/pet.ts';
import type { Store } from '../src/domain/store.ts';
import { sqliteBackend, type Backend } from './support/backends.ts';
import { ManualClock } from './support/manual-clock.ts';

/**
 * Each in-process structure is driven far past a small byte ceiling with hostile input: what it
 * accounts for never exceeds the ceiling, and what was used last is still held.
 */
const CEILING = 256 * 1024;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);
const MINUTE: WindowSpec[] = [{ name: 'minute', limit: 60, seconds: 60 }];

/** A distinct string of about `length` characters, different from every other `index`. */
function huge(index: number, length: number): string {
  return `${index}-${'x'.repeat(length)}`;
}

describe('memory bounds: the in-memory limiter', () => {
  it('stays within its byte ceiling under 3,000 distinct 15 KB addresses, keeping the newest', async () => {
    const limiter = new MemoryLimiter({ maxBytes: CEILING });
    try {
      const account = { subject: 'account:1', windows: MINUTE };
      await limiter.consume(account, NOW);
      let peak = 0;
      for (let i = 0; i < 3000; i += 1) {
        await limiter.consume({ subject: `address:${huge(i, 15_000)}`, windows: MINUTE }, NOW);
        peak = Math.max(peak, limiter.bytes());
      }
      assert.ok(peak <= CEILING, `accounted ${peak} bytes, ceiling ${CEILING}`);
      assert.ok(peak > CEILING / 2, `accounted ${peak} bytes: the estimate should count the keys`);
      const newest = await limiter.consume({ subject: `address:${huge(2999, 15_000)}`, windows: MINUTE }, NOW);
      assert.equal(newest.windows[0]?.remaining, 58, 'the newest address kept its count');
      const accountState = await limiter.consume({ ...account, peek: true }, NOW);
      assert.equal(accountState.windows[0]?.remaining, 59, 'the flood of addresses did not evict the account');
    } finally {
      await limiter.close();
    }
  });

  it('stays within its byte ceiling under 3,000 distinct long strike subjects', async () => {
    const limiter = new MemoryLimiter({ maxBytes: CEILING });
    try {
      const one: WindowSpec[] = [{ name: 'minute', limit: 1, seconds: 60 }];
      let peak = 0;
      let strikes = 0;
      for (let i = 0; i < 3000; i += 1) {
        const request = { subject: `account:${i}`, windows: one, strikeSubject: `key:${huge(i, 5000)}` };
        await limiter.consume(request, NOW);
        strikes = (await limiter.consume(request, NOW)).strikes;
        peak = Math.max(peak, limiter.bytes());
      }
      assert.ok(peak <= CEILING, `accounted ${peak} bytes, ceiling ${CEILING}`);
      assert.equal(strikes, 1);
      const last = { subject: 'account:2999', windows: one, strikeSubject: `key:${huge(2999, 5000)}` };
      assert.equal((await limiter.consume(last, NOW)).strikes, 2, 'the newest strike was kept');
    } finally {
      await limiter.close();
    }
  });
});

describe('memory bounds: caches over storage', () => {
  let backend: Backend;
  let store: Store;
  const clock = new ManualClock(NOW);

  before(async () => {
    backend = sqliteBackend();
    store = await openStore({ databaseUrl: backend.databaseUrl, pgPoolSize: 1, storageTimeoutMs: 2000 });
    await store.migrate();
  });

  after(async () => {
    await store.close();
    await backend.cleanup();
  });

  it('the key cache stays within its byte ceiling under distinct 15 KB headers, keeping the newest', async () => {
    let monotonic = 0;
    const verifier = new KeyVerifier(store.keys, clock, {
      ttlMs: 60_000,
      maxBytes: CEILING,
      monotonicNow: () => monotonic,
    });
    const accounts = new AccountService(store, clock);
    try {
      await accounts.createAccount('memory-keys', { plan: 'free' });
      const { key, record } = await accounts.createKey('memory-keys');
      // One real key behind 2,000 distinct long headers (the token is trimmed), and unknown keys.
      const padded = (i: number): string => `Bearer ${' '.repeat(15_000 + i)}${key}`;
      let peak = 0;
      for (let i = 0; i < 2000; i += 1) {
        assert.equal((await verifier.verify(padded(i))).ok, true);
        const unknown = await verifier.verify(`Bearer ${'\t'.repeat(10_000 + i)}${generateApiKey()}`);
        assert.equal(unknown.ok, false);
        peak = Math.max(peak, verifier.bytes());
        monotonic += 1;
      }
      assert.ok(peak <= CEILING, `accounted ${peak} bytes, ceiling ${CEILING}`);
      assert.ok(peak > CEILING / 2, `accounted ${peak} bytes: the estimate should count the headers`);
      await accounts.revokeKey(record.id);
      // Within the TTL a cached answer is still trusted, so "ok" after revocation proves a cache hit.
      assert.equal((await verifier.verify(padded(1999))).ok, true, 'the newest header is still cached');
      assert.equal((await verifier.verify(padded(0))).ok, false, 'the oldest header was evicted');
    } finally {
      await verifier.close();
    }
  });

  it('the page and pet caches stay within their byte ceilings over pets with 200-emoji names', async () => {
    const pets = new PetService(
      store,
      clock,
      { deprecatedAt: new Date(NOW - 1000), sunsetAt: GET_PET_SUNSET },
      { pageBytes: CEILING, petBytes: CEILING / 4 },
    );
    for (let i = 0; i < 400; i += 1) {
      await pets.create({ name: `${i} ${'🐈'.repeat(200)}`, categoryId: 1n, status: 'available' });
    }
    const peak = { pages: 0, pets: 0 };
    // Every id is a valid cursor, so a client can ask for as many distinct full pages as there are pets.
    const pages: PetPage[] = [];
    for (let afterId = 1; afterId < 380; afterId += 1) {
      pages.push(await pets.list({ limit: 10, status: undefined, cursor: encodeCursor(afterId) }));
      peak.pages = Math.max(peak.pages, pets.cacheBytes().pages);
    }
    const held: PetRecord[] = [];
    for (let id = 1; id <= 400; id += 1) {
      held.push(await pets.get(BigInt(id)));
      peak.pets = Math.max(peak.pets, pets.cacheBytes().pets);
    }
    assert.ok(peak.pages <= CEILING, `pages: accounted ${peak.pages} bytes, ceiling ${CEILING}`);
    assert.ok(peak.pages > CEILING / 2, `pages: accounted ${peak.pages} bytes: the estimate should count them`);
    assert.ok(peak.pets <= CEILING / 4, `pets: accounted ${peak.pets} bytes, ceiling ${CEILING / 4}`);
    assert.ok(peak.pets > CEILING / 8, `pets: accounted ${peak.pets} bytes: the estimate should count them`);
    // The same object again is a cache hit; a fresh one was read from storage.
    const again = await pets.list({ limit: 10, status: undefined, cursor: encodeCursor(379) });
    assert.equal(again, pages.at(-1), 'the newest page is answered from the cache');
    const oldest = await pets.list({ limit: 10, status: undefined, cursor: encodeCursor(1) });
    assert.notEqual(oldest, pages[0], 'the oldest page was evicted');
    assert.equal(await pets.get(400n), held[399], 'the newest pet is answered from the cache');
    assert.notEqual(await pets.get(1n), held[0], 'the oldest pet was evicted');
  });
});
