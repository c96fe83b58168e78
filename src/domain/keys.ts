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

/**
 * Who created or revoked a key: an operator token (its id), the CLI (its OS user), or a key of the
 * account, through the public API (its id). Null on a record where it was not kept (keys issued
 * before it was, or the demo key made at first start).
 */
export type KeyActor =
  | { readonly kind: 'operator_token'; readonly id: string }
  | { readonly kind: 'cli'; readonly user: string }
  | { readonly kind: 'key'; readonly id: string };

export interface ApiKeyRecord {
  /** Non-secret identifier shown in listings and used to revoke. */
  readonly id: string;
  readonly accountId: number;
  /** What its holder calls it; null for a key issued without one. */
  readonly name: string | null;
  readonly createdBy: KeyActor | null;
  readonly revokedBy: KeyActor | null;
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
  readonly name?: string | null;
  readonly createdBy?: KeyActor | null;
}

export interface KeyStore {
  create(key: NewApiKey, now: number): Promise<ApiKeyRecord>;
  findPrincipalByHash(hash: string): Promise<KeyPrincipal | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  listForAccount(accountId: number): Promise<ApiKeyRecord[]>;
  /** At most `limit` of the account's keys, in the order of listForAccount. */
  pageForAccount(query: KeyPageQuery): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. Revoking twice keeps the first time, and who revoked it first. */
  revoke(id: string, now: number, by?: KeyActor | null): Promise<boolean>;
  /** Makes the key expire at `at`, or keeps its expiry when that comes sooner; false when no such key exists. */
  expireBy(id: string, at: number): Promise<boolean>;
  /** The account's keys that are neither revoked nor expired at `now` (a banned key counts: its ban ends). */
  countActive(accountId: number, now: number): Promise<number>;
  /**
   * Records last-used times, batched by the caller so the hot path never writes; a time never moves
   * back. A background write: resolves false, having written nothing, when storage was busy.
   */
  recordLastUsed(lastUsed: ReadonlyMap<string, number>, mode?: BackgroundWrite): Promise<boolean>;
}
