/** API keys as storage keeps them (never the plaintext), and the part of the storage seam for them. */
import type { BackgroundWrite } from './background-write.ts';
import type { KeyPrincipal } from './principal.ts';
import type { KeyScope } from './scopes.ts';

/** A page of an account's keys, oldest first (creation time, then id in byte order). */
export interface KeyPageQuery {
  readonly accountId: number;
  /** Only keys after this one in that order; undefined for the first page. */
  readonly after: { readonly createdAt: number; readonly id: string } | undefined;
  readonly limit: number;
}

export interface ApiKeyRecord {
  /** Non-secret identifier shown in listings and used to revoke. */
  readonly id: string;
  readonly accountId: number;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
  /** What the key may do; fixed when it is issued. */
  readonly scopes: readonly KeyScope[];
  /** End of the key's active ban, if it is banned now or was until recently (see BanStore). */
  readonly bannedUntil: number | null;
}

export interface NewApiKey {
  readonly id: string;
  readonly accountId: number;
  /** SHA-256 of the plaintext key; the plaintext is never stored. */
  readonly hash: string;
  readonly expiresAt: number | null;
  /** What the key may do; absent, every scope, those of later releases included (EVERY_SCOPE_MARKER). */
  readonly scopes?: readonly KeyScope[];
}

export interface KeyStore {
  create(key: NewApiKey, now: number): Promise<ApiKeyRecord>;
  findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  listForAccount(accountId: number): Promise<ApiKeyRecord[]>;
  /** At most `limit` of the account's keys, in the order of listForAccount. */
  pageForAccount(query: KeyPageQuery): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. Revoking twice keeps the first time. */
  revoke(id: string, now: number): Promise<boolean>;
  /**
   * Records last-used times, batched by the caller so the hot path never writes; a time never moves
   * back. A background write: resolves false, having written nothing, when storage was busy.
   */
  recordLastUsed(lastUsed: ReadonlyMap<string, number>, mode?: BackgroundWrite): Promise<boolean>;
}
