import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import { ENTRY_OVERHEAD_BYTES, stringBytes } from '../memory-size.ts';
import type { BackgroundWrite } from '../domain/background-write.ts';
import type { KeyStore } from '../domain/keys.ts';
import type { KeyPrincipal } from '../domain/principal.ts';
import { hashApiKey, isWellFormedApiKey } from './api-key.ts';

export type RejectionReason =
  'missing' | 'wrong_scheme' | 'empty' | 'malformed' | 'ambiguous' | 'unknown' | 'revoked' | 'expired';

export type Verification =
  | { readonly ok: true; readonly principal: KeyPrincipal }
  | { readonly ok: false; readonly reason: RejectionReason; readonly message: string };

interface CacheEntry {
  readonly principal: KeyPrincipal | undefined;
  readonly fetchedAt: number;
}

export interface KeyVerifierOptions {
  /** How long a storage answer is trusted; bounds how late a revocation or plan change takes effect. */
  readonly ttlMs: number;
  /** Most cached answers (known and unknown keys); the least recently used are dropped first. */
  readonly maxEntries?: number;
  /**
   * Most bytes the cached answers may take, their keys included: a key is the whole Authorization
   * header, which may be as long as the header limit allows. Default 8 MiB.
   */
  readonly maxBytes?: number;
  /** How often last-used times are written back. */
  readonly lastUsedFlushMs?: number;
  /** Monotonic milliseconds for cache ages; staleness is a real-time bound, not a wall-clock one. */
  readonly monotonicNow?: () => number;
  /**
   * When the key's ban ends, as the rate-limit policy knows it (0: none). A banned key's answers are
   * kept, however old, until then.
   */
  readonly banEndOf?: (keyId: string) => number;
}

const BEARER = /^bearer(?:[ \t]+(.*))?$/i;

/** The token of an `Authorization: Bearer <token>` header as verification reads it; undefined without one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const token = (BEARER.exec(authorization ?? '')?.[1] ?? '').trim();
  return token === '' ? undefined : token;
}

/**
 * Verifies `Authorization: Bearer <key>` headers. The hot path answers from an in-process cache of
 * storage lookups; an entry older than `ttlMs` is looked up again, so a
 * revocation, expiry or plan change made on any instance takes effect within `ttlMs`.
 *
 * A banned key's entries are the exception: they are kept until the ban ends or is lifted
 * (banEndOf; a lifting invalidates the key), so its requests, all refused anyway, cost storage nothing and are
 * refused as banned even while storage is unreachable.
 */
export class KeyVerifier {
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly inFlight = new Map<string, Promise<KeyPrincipal | undefined>>();
  private readonly lastUsed = new Map<string, number>();
  private readonly store: KeyStore;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly monotonicNow: () => number;
  private readonly banEndOf: ((keyId: string) => number) | undefined;
  private readonly flushTimer: NodeJS.Timeout;

  constructor(store: KeyStore, clock: Clock, options: KeyVerifierOptions) {
    this.store = store;
    this.clock = clock;
    this.ttlMs = options.ttlMs;
    this.cache = new LRUCache({
      max: options.maxEntries ?? 10_000,
      maxSize: options.maxBytes ?? 8 * 1024 * 1024,
      sizeCalculation: cacheEntryBytes,
    });
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
    this.banEndOf = options.banEndOf;
    this.flushTimer = setInterval(
      () => void this.flushLastUsed().catch(() => undefined),
      options.lastUsedFlushMs ?? 5000,
    );
    this.flushTimer.unref();
  }

  /** Nearly always answered from the cache, without parsing or hashing the key. */
  async verify(authorization: string | undefined): Promise<Verification> {
    const examined = this.examine(authorization);
    if (typeof examined !== 'string') return examined;
    const principal = await this.lookUp(hashApiKey(examined));
    this.remember(authorization as string, principal);
    return this.judge(principal);
  }

  /**
   * The verdict when it needs no storage (a cached answer, or a header that is missing or
   * malformed); undefined when only a storage lookup can tell, which `verify` then makes.
   */
  verifyWithoutStorage(authorization: string | undefined): Verification | undefined {
    const examined = this.examine(authorization);
    return typeof examined === 'string' ? undefined : examined;
  }

  /**
   * Whether this exact header named an existing key when storage was last asked, however long ago:
   * a key this instance has served keeps being looked up even while its address is over the limit
   * for requests without a valid key, which only invented keys then cannot pass.
   */
  recognises(authorization: string | undefined): boolean {
    return authorization !== undefined && this.cache.get(authorization)?.principal !== undefined;
  }

  /**
   * The key this exact header named when storage was last asked, however long ago, if the key was
   * valid then (not revoked, not expired now): whose request it is while storage cannot be asked.
   */
  lastKnownPrincipal(authorization: string | undefined): KeyPrincipal | undefined {
    const principal = authorization === undefined ? undefined : this.cache.peek(authorization)?.principal;
    if (principal === undefined || principal.revokedAt !== null) return undefined;
    if (principal.expiresAt !== null && principal.expiresAt <= this.clock.now()) return undefined;
    return principal;
  }

  /** A verdict reached without storage, or the well-formed token that storage must be asked about. */
  private examine(authorization: string | undefined): Verification | string {
    // Keyed by the exact header: a hit skips parsing, the checksum and SHA-256 (measured: 4% of a
    // cached GET). The map lives only in this process's memory, bounded and at most ttlMs old.
    const cached = authorization === undefined ? undefined : this.cache.get(authorization);
    if (cached && (this.monotonicNow() - cached.fetchedAt < this.ttlMs || this.isBanned(cached.principal)))
      return this.judge(cached.principal);
    if (authorization === undefined || authorization === '') {
      return reject('missing', 'the Authorization header is missing; send Authorization: Bearer <API key>');
    }
    const match = BEARER.exec(authorization);
    if (!match)
      return reject('wrong_scheme', 'the Authorization scheme must be Bearer: Authorization: Bearer <API key>');
    const token = (match[1] ?? '').trim();
    if (token === '') return reject('empty', 'the Bearer token is empty; send Authorization: Bearer <API key>');
    if (!isWellFormedApiKey(token)) {
      return reject(
        'malformed',
        'the API key is malformed: expected pst_ followed by 36 letters and digits with a valid checksum',
      );
    }
    return token;
  }

  /** Forget cached answers about one key, e.g. after its ban was lifted, so the next request reads it afresh. */
  invalidateKey(keyId: string): void {
    const stale: string[] = [];
    for (const [authorization, entry] of this.cache.entries())
      if (entry.principal?.keyId === keyId) stale.push(authorization);
    for (const authorization of stale) this.cache.delete(authorization);
  }

  /** Cached answers held now, for tests of the memory bound. */
  size(): number {
    return this.cache.size;
  }

  /** Bytes the cached answers account for now, keys included, for tests of the memory bound. */
  bytes(): number {
    return this.cache.calculatedSize;
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed('waiting');
  }

  /**
   * Writes last-used times back as a background write (BackgroundWrite in src/domain/background-write.ts): on
   * each tick only if storage takes it at once, so no request ever waits for it. A batch that was
   * not written is kept for the next try.
   */
  async flushLastUsed(mode: BackgroundWrite = 'if-idle'): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = new Map(this.lastUsed);
    this.lastUsed.clear();
    let written = false;
    try {
      written = await this.store.recordLastUsed(batch, mode);
    } finally {
      if (!written) this.keepUnwritten(batch);
    }
  }

  /** A time recorded since the batch was taken is newer than the batch's, and stays. */
  private keepUnwritten(batch: ReadonlyMap<string, number>): void {
    for (const [keyId, at] of batch) {
      const newer = this.lastUsed.get(keyId);
      if (newer === undefined || newer < at) this.lastUsed.set(keyId, at);
    }
  }

  private isBanned(principal: KeyPrincipal | undefined): boolean {
    if (principal === undefined || this.banEndOf === undefined) return false;
    return this.banEndOf(principal.keyId) > this.clock.now();
  }

  private judge(principal: KeyPrincipal | undefined): Verification {
    if (!principal) return reject('unknown', 'the API key is not recognised');
    if (principal.revokedAt !== null) return reject('revoked', 'the API key has been revoked');
    const now = this.clock.now();
    if (principal.expiresAt !== null && principal.expiresAt <= now) {
      return reject('expired', `the API key expired at ${new Date(principal.expiresAt).toISOString()}`);
    }
    this.lastUsed.set(principal.keyId, now);
    return { ok: true, principal };
  }

  private lookUp(hash: string): Promise<KeyPrincipal | undefined> {
    const pending = this.inFlight.get(hash);
    if (pending) return pending;
    const lookup = this.store.findPrincipalByHash(hash).finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, lookup);
    return lookup;
  }

  private remember(authorization: string, principal: KeyPrincipal | undefined): void {
    this.cache.set(authorization, { principal, fetchedAt: this.monotonicNow() });
  }
}

/** More than one Authorization header: which one was meant is never guessed. */
export const AMBIGUOUS_CREDENTIALS: Verification = reject(
  'ambiguous',
  'the request carries more than one Authorization header; send exactly one: Authorization: Bearer <API key>',
);

function cacheEntryBytes(entry: CacheEntry, authorization: string): number {
  const principal = entry.principal;
  const principalBytes =
    principal === undefined
      ? 0
      : ENTRY_OVERHEAD_BYTES + stringBytes(principal.keyId) + stringBytes(principal.accountName);
  return ENTRY_OVERHEAD_BYTES + stringBytes(authorization) + principalBytes;
}

function reject(reason: RejectionReason, message: string): Verification {
  return { ok: false, reason, message };
}
