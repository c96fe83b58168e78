import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Store } from '../../src/domain/store.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { backends, pgBouncerBackend, type Backend } from '../support/backends.ts';

/**
 * One contract for every Store backend (test/storage/store-contract-*.test.ts): the same cases run
 * against SQLite and PostgreSQL, so the two cannot drift apart, and against PostgreSQL through
 * PgBouncer in transaction mode, so nothing comes to rely on a session of its own.
 */

export const NOW = Date.UTC(2026, 5, 1, 12);
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function open(databaseUrl: string): Promise<Store> {
  return openStore({ databaseUrl, pgPoolSize: 10, storageTimeoutMs: 5000 });
}

let unique = 0;
/** A name, id or hash no other of the run has. */
export function name(prefix: string): string {
  unique += 1;
  return `${prefix}-${unique}`;
}

/** What the cases of one backend work with. */
export interface StoreUnderContract {
  readonly backend: Backend;
  /** The backend's store, migrated before the cases run, which they share. */
  store(): Store;
  /** A store on a fresh, empty database of the backend, not migrated yet. */
  openFresh(): Promise<Store>;
  /** Stores a case opened itself, closed after the cases. */
  closeAfter(...stores: Store[]): void;
  /** A new account in the shared store; its id. */
  newAccountId(): Promise<number>;
}

/**
 * Registers `Store contract: <backend>` for each backend, skipped with the reason where the backend
 * is unavailable (failed under CI=true), with `cases` in it.
 */
export async function describeStoreContract(cases: (contract: StoreUnderContract) => void): Promise<void> {
  for (const backend of [...(await backends()), await pgBouncerBackend()]) {
    describe(`Store contract: ${backend.label}`, { skip: backend.skip }, () => cases(storeUnderContract(backend)));
  }
}

function storeUnderContract(backend: Backend): StoreUnderContract {
  let shared: Store | undefined;
  const extraStores: Store[] = [];

  before(async () => {
    shared = await open(backend.databaseUrl);
    assert.equal(shared.backend, backend.name);
    await shared.migrate();
  });

  after(async () => {
    await shared?.close();
    for (const extra of extraStores) await extra.close().catch(() => undefined);
    await backend.cleanup();
  });

  const store = (): Store => {
    assert.ok(shared !== undefined, 'the store is read before the suite opened it');
    return shared;
  };
  return {
    backend,
    store,
    async openFresh() {
      const opened = await open(await backend.freshDatabaseUrl());
      extraStores.push(opened);
      return opened;
    },
    closeAfter(...stores) {
      extraStores.push(...stores);
    },
    async newAccountId() {
      return (await store().accounts.create({ name: name('acct'), plan: 'free', perMinute: null, perDay: null }, NOW))
        .id;
    },
  };
}
