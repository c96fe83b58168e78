import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key.ts';
import { KeyVerifier } from '../../src/auth/key-verifier.ts';
import { StorageUnavailableError } from '../../src/errors.ts';
import { openSqliteStore } from '../../src/storage/sqlite-dialect.ts';
import {
  NodeSqliteDatabase,
  writeIfIdle,
  WriterLock,
  type SqliteConnections,
} from '../../src/storage/sqlite-connections.ts';
import type { ApiKeyRecord, KeyStore } from '../../src/domain/keys.ts';
import type { KeyPrincipal } from '../../src/domain/principal.ts';
import type { Store } from '../../src/domain/store.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { holdWriteLock } from '../support/sqlite-write-lock.ts';
import { ALL_SCOPES } from '../../src/domain/scopes.ts';

/**
 * Background writes (BackgroundWrite in src/domain/background-write.ts), with the keys' last-used write-back
 * as the one there is: they never wait for a lock, so nothing waits behind them, and a batch they
 * could not write is kept, never losing a newer time.
 */
const NOW = Date.parse('2026-06-01T12:00:00Z');
const TIMEOUT_MS = 1000;
/** Reads answer in milliseconds, far below this; one held up by a waiting write-back would take about TIMEOUT_MS. */
const READ_BOUND_MS = 500;

describe('the last-used write-back while another process holds the SQLite write lock', () => {
  let directory: string;
  let path: string;
  let store: Store;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-background-'));
    path = join(directory, 'petstore.db');
    store = openSqliteStore(path, { timeoutMs: TIMEOUT_MS });
    await store.migrate();
  });

  after(async () => {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  async function newKey(): Promise<{ key: string; id: string }> {
    const account = await store.accounts.create(
      { name: `acct-${Math.random()}`, plan: 'free', perMinute: null, perDay: null },
      NOW,
    );
    const key = generateApiKey();
    const record = await store.keys.create(
      { id: `kid-${Math.random()}`, accountId: account.id, hash: hashApiKey(key), expiresAt: null },
      NOW,
    );
    return { key, id: record.id };
  }

  it('a write-back every 100 ms through a 1.2 s lock: no lookup or read waits, the time is written after', async () => {
    const { key, id } = await newKey();
    await store.pets.create({ name: 'rex', categoryId: 1n, status: null }, NOW);
    const clock = new ManualClock(NOW);
    // Every verification is a lookup (ttlMs 0); the write-back ticks more than ten times under the lock.
    const verifier = new KeyVerifier(store.keys, clock, { ttlMs: 0, lastUsedFlushMs: 100 });
    try {
      const locker = await holdWriteLock(path, 1200);
      const exited = once(locker, 'exit');
      const lockedAt = performance.now();
      clock.set(NOW + 1000);
      let slowest = 0;
      let reads = 0;
      while (performance.now() - lockedAt < 1000) {
        const started = performance.now();
        assert.equal((await verifier.verify(`Bearer ${key}`)).ok, true);
        assert.equal((await store.pets.list({ afterId: 0, limit: 10, status: undefined })).length, 1);
        slowest = Math.max(slowest, performance.now() - started);
        reads += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(slowest < READ_BOUND_MS, `a lookup and a read took ${Math.round(slowest)} ms under the lock`);
      assert.ok(reads >= 10, `only ${reads} lookups in a second`);
      assert.equal((await store.keys.findById(id))?.lastUsedAt, null, 'nothing was written under the lock');
      await exited;

      const deadline = performance.now() + 5000;
      while ((await store.keys.findById(id))?.lastUsedAt !== NOW + 1000) {
        assert.ok(performance.now() < deadline, 'the kept time was never written');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await verifier.close();
    }
  });

  it('if-idle gets StorageUnavailableError at once under the lock; waiting gets it at the timeout', async () => {
    const { id } = await newKey();
    const locker = await holdWriteLock(path, TIMEOUT_MS + 1000);
    const exited = once(locker, 'exit');
    try {
      let started = performance.now();
      await assert.rejects(store.keys.recordLastUsed(new Map([[id, NOW + 5]]), 'if-idle'), StorageUnavailableError);
      assert.ok(performance.now() - started < READ_BOUND_MS, 'if-idle waited');
      started = performance.now();
      await assert.rejects(store.keys.recordLastUsed(new Map([[id, NOW + 5]]), 'waiting'), StorageUnavailableError);
      const waited = performance.now() - started;
      assert.ok(waited >= TIMEOUT_MS - 20 && waited < TIMEOUT_MS + 500, `waited ${Math.round(waited)} ms`);
      assert.equal((await store.keys.findById(id))?.lastUsedAt, null);
    } finally {
      await exited;
    }
    assert.equal(await store.keys.recordLastUsed(new Map([[id, NOW + 5]]), 'if-idle'), true);
    assert.equal((await store.keys.findById(id))?.lastUsedAt, NOW + 5);
  });
});

describe('writeIfIdle', () => {
  it('writes nothing while a request of this process holds the writer, and writes once it is free', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'petstore-background-'));
    const path = join(directory, 'petstore.db');
    const writer = new NodeSqliteDatabase(new DatabaseSync(path, { timeout: 0 }));
    writer.exec('PRAGMA journal_mode = WAL; CREATE TABLE tally (n INTEGER)');
    const connections: SqliteConnections = { writer, reader: writer, writerLock: new WriterLock(), timeoutMs: 100 };
    try {
      const insert = CompiledQuery.raw('INSERT INTO tally (n) VALUES (1)', []);
      const release = await connections.writerLock.acquire();
      assert.equal(writeIfIdle(connections, [insert]), false);
      release();
      assert.equal(writeIfIdle(connections, [insert]), true);
      const rows = writer.rowsNow<{ n: bigint }>(CompiledQuery.raw('SELECT n FROM tally', []));
      assert.deepEqual(
        rows.map((row) => row.n),
        [1n],
      );
    } finally {
      writer.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('KeyVerifier keeps what it could not write', () => {
  /** A KeyStore that knows one key and answers the write-back as told. */
  function fakeStore(key: string): KeyStore & { answers: Array<() => Promise<boolean>>; written: number[] } {
    const principal: KeyPrincipal = {
      keyId: 'kid',
      accountId: 1,
      accountName: 'acct',
      plan: 'free',
      scopes: ALL_SCOPES,
      perMinute: null,
      perDay: null,
      expiresAt: null,
      revokedAt: null,
      bannedUntil: null,
    };
    const unused = (): never => assert.fail('not used');
    const store = {
      answers: [] as Array<() => Promise<boolean>>,
      written: [] as number[],
      findPrincipalByHash: (hash: string) => Promise.resolve(hash === hashApiKey(key) ? principal : undefined),
      recordLastUsed(lastUsed: ReadonlyMap<string, number>): Promise<boolean> {
        const answer = store.answers.shift() ?? (() => Promise.resolve(true));
        return answer().then((written) => {
          if (written) store.written.push(lastUsed.get('kid') as number);
          return written;
        });
      },
      create: unused,
      findById: (): Promise<ApiKeyRecord | undefined> => unused(),
      listForAccount: unused,
      pageForAccount: unused,
      revoke: unused,
      expireBy: unused,
      countActive: unused,
    };
    return store;
  }

  it('a skipped or failed batch is written on the next try, and a newer time is never replaced by it', async () => {
    const key = generateApiKey();
    const store = fakeStore(key);
    const clock = new ManualClock(NOW);
    const verifier = new KeyVerifier(store, clock, { ttlMs: 0, lastUsedFlushMs: 60_000 });
    try {
      assert.equal((await verifier.verify(`Bearer ${key}`)).ok, true);
      store.answers.push(() => Promise.resolve(false));
      await verifier.flushLastUsed();
      store.answers.push(() => Promise.reject(new StorageUnavailableError('storage is unavailable')));
      await assert.rejects(verifier.flushLastUsed(), StorageUnavailableError);
      assert.deepEqual(store.written, []);

      // A time recorded while a write-back is under way, which then fails, is newer and stays.
      let fail: (error: Error) => void = () => undefined;
      store.answers.push(() => new Promise((_resolve, reject) => (fail = reject)));
      const flushing = verifier.flushLastUsed();
      clock.set(NOW + 10);
      assert.equal((await verifier.verify(`Bearer ${key}`)).ok, true);
      fail(new StorageUnavailableError('storage is unavailable'));
      await assert.rejects(flushing, StorageUnavailableError);

      await verifier.flushLastUsed();
      assert.deepEqual(store.written, [NOW + 10]);
      await verifier.flushLastUsed();
      assert.deepEqual(store.written, [NOW + 10], 'nothing is left to write');
    } finally {
      await verifier.close();
    }
  });
});
