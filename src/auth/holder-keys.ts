import type { Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import type { ApiKeyRecord } from '../domain/keys.ts';
import type { KeyPrincipal } from '../domain/principal.ts';
import type { Store } from '../domain/store.ts';
import type { Page } from './account-service.ts';

/** Where a page of an account's keys starts: after this key, in the order of KeyStore.pageForAccount. */
export interface KeyPosition {
  readonly createdAt: number;
  readonly id: string;
}

/**
 * The account holder's side of keys: what a key holding `keys:manage` does to its own account's
 * keys through the public API. The caller is the verified principal; its account bounds every call.
 */
export class HolderKeyService {
  private readonly store: Store;
  private readonly clock: Clock;

  constructor(store: Store, clock: Clock) {
    this.store = store;
    this.clock = clock;
  }

  /** A page of the caller's account's keys, oldest first, with whether more follow. */
  async list(
    caller: KeyPrincipal,
    page: { after: KeyPosition | undefined; limit: number },
  ): Promise<Page<ApiKeyRecord>> {
    const found = await this.store.keys.pageForAccount({
      accountId: caller.accountId,
      after: page.after,
      limit: page.limit + 1,
    });
    return { items: found.slice(0, page.limit), more: found.length > page.limit };
  }
}

/**
 * The cursors of GET /v1/keys: opaque to clients, base64url of a versioned position (the last key
 * of the page before), so keys created meanwhile never shift or repeat a page.
 */
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const POSITION = /^h1\.(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_]{1,64})$/;

export function encodeKeyCursor(last: KeyPosition): string {
  return Buffer.from(`h1.${last.createdAt}.${last.id}`).toString('base64url');
}

export function decodeKeyCursor(cursor: string): KeyPosition {
  const decoded = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  const match = POSITION.exec(decoded);
  const createdAt = match ? Number(match[1]) : Number.NaN;
  if (
    match === null ||
    !Number.isSafeInteger(createdAt) ||
    encodeKeyCursor({ createdAt, id: match[2] ?? '' }) !== cursor
  )
    throw new ValidationError(
      'invalid_query',
      'query parameter \'cursor\' is malformed: use the cursor of a Link rel="next" header unchanged',
    );
  return { createdAt, id: match[2] ?? '' };
}
