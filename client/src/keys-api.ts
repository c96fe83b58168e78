import { linkTarget } from './link-header.ts';
import type { CallOptions } from './options.ts';
import type { PetstoreError } from './petstore-error.ts';
import { randomUuid } from './random-uuid.ts';
import type { Transport } from './transport.ts';
import type { CreatedKey, Key, NewKey } from './types.ts';
import { responseOf, type PetstoreResponse } from './with-response.ts';

export interface KeyListOptions extends CallOptions {
  /** Keys per page, 1 to 100 (the service's default is 20). */
  readonly limit?: number | undefined;
}

export interface KeyListPageOptions extends KeyListOptions {
  /** The cursor of the previous page; none for the first page. */
  readonly cursor?: string | undefined;
}

export interface KeyPage {
  readonly keys: Key[];
  /** The cursor of the next page; undefined on the last page. */
  readonly nextCursor: string | undefined;
}

export interface KeyCreateOptions extends CallOptions {
  /** Sent as `Idempotency-Key`; a random UUID when absent. Every retry of the call sends the same key. */
  readonly idempotencyKey?: string | undefined;
}

export interface KeyRollOptions extends KeyCreateOptions {
  /** How long the old key keeps working, 0 (it stops at once) to 604800 seconds (7 days); 24 hours when absent. */
  readonly gracePeriodSeconds?: number | undefined;
}

/**
 * What `keys.create` may throw besides the errors of every call: a scope the calling key does not hold (403
 * `insufficient_scope`, also for a key without `keys:manage`), the account's limit of active keys (409 `key_limit`),
 * or an Idempotency-Key used for another request or by another key (422 `idempotency_conflict`).
 */
export type KeyCreateError = PetstoreError<'insufficient_scope' | 'key_limit' | 'idempotency_conflict'>;

/**
 * What `keys.roll` may throw besides `KeyCreateError`: an unknown key or another account's (404 `not_found`), or a
 * revoked or expired one (409 `key_inactive`).
 */
export type KeyRollError = KeyCreateError | PetstoreError<'not_found' | 'key_inactive'>;

function pageQuery(options: KeyListPageOptions): string {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

function keyPath(keyId: string, action: 'revoke' | 'roll'): string {
  if (typeof keyId !== 'string' || keyId === '') throw new TypeError('keyId must be a key id, such as key_…');
  return `/keys/${encodeURIComponent(keyId)}/${action}`;
}

/**
 * The account's keys, for a key that holds `keys:manage`, each call giving its result with the metadata of the
 * answer that carried it (`client.withResponse.keys`).
 */
export class KeysWithResponseApi {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** One page of the account's keys and the cursor of the next page, with the page's answer. */
  async listPage(options: KeyListPageOptions = {}): Promise<PetstoreResponse<KeyPage>> {
    const answer = await this.transport.send({
      method: 'GET',
      path: `/keys${pageQuery(options)}`,
      spendsQuota: true,
      options,
    });
    const next = linkTarget(answer.headers, 'next', answer.url);
    return responseOf(answer, {
      keys: answer.body as Key[],
      nextCursor: next?.searchParams.get('cursor') ?? undefined,
    });
  }

  /** Every key of the account, as `keys.list` yields them, each with the answer of its page. */
  async *list(options: KeyListOptions = {}): AsyncGenerator<PetstoreResponse<Key>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...options, cursor });
      for (const key of page.data.keys) yield { ...page, data: key };
      cursor = page.data.nextCursor;
    } while (cursor !== undefined);
  }

  /** Creates a key, as `keys.create` does, with the answer (201). */
  async create(key: NewKey, options: KeyCreateOptions = {}): Promise<PetstoreResponse<CreatedKey>> {
    return this.mint('/keys', key, options);
  }

  /** Revokes a key, as `keys.revoke` does, with the answer. */
  async revoke(keyId: string, options: CallOptions = {}): Promise<PetstoreResponse<Key>> {
    const answer = await this.transport.send({
      method: 'POST',
      path: keyPath(keyId, 'revoke'),
      spendsQuota: true,
      options,
    });
    return responseOf(answer, answer.body as Key);
  }

  /** Rolls a key, as `keys.roll` does, with the answer (201). */
  async roll(keyId: string, options: KeyRollOptions = {}): Promise<PetstoreResponse<CreatedKey>> {
    const { gracePeriodSeconds } = options;
    return this.mint(keyPath(keyId, 'roll'), gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }, options);
  }

  private async mint(path: string, body: object, options: KeyCreateOptions): Promise<PetstoreResponse<CreatedKey>> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    const answer = await this.transport.send({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      spendsQuota: true,
      options,
    });
    return responseOf(answer, answer.body as CreatedKey);
  }
}

/**
 * The account's keys (`client.keys`), for a client whose key holds `keys:manage`: list them, create keys with some of
 * its scopes, roll a key that leaked, revoke one.
 */
export class KeysApi {
  private readonly withResponse: KeysWithResponseApi;

  constructor(withResponse: KeysWithResponseApi) {
    this.withResponse = withResponse;
  }

  /** One page of the account's keys, oldest first, and the cursor of the next page. Never a secret. */
  async listPage(options: KeyListPageOptions = {}): Promise<KeyPage> {
    return (await this.withResponse.listPage(options)).data;
  }

  /** Every key of the account, oldest first, page after page along each page's `Link: rel="next"`. */
  async *list(options: KeyListOptions = {}): AsyncGenerator<Key, void, undefined> {
    for await (const key of this.withResponse.list(options)) yield key.data;
  }

  /**
   * Creates a key with `scopes` the client's key holds; its secret, `key`, is in this answer only. The
   * Idempotency-Key makes retries safe: one key is made, and only this client's key is answered its secret again.
   * Throws `KeyCreateError` for a scope it lacks or past the account's limit.
   */
  async create(key: NewKey, options: KeyCreateOptions = {}): Promise<CreatedKey> {
    return (await this.withResponse.create(key, options)).data;
  }

  /** Revokes a key of the account (the client's own included); every instance refuses it within one second. */
  async revoke(keyId: string, options: CallOptions = {}): Promise<Key> {
    return (await this.withResponse.revoke(keyId, options)).data;
  }

  /**
   * A new key with the old one's name and scopes; the old one expires after `gracePeriodSeconds` (24 hours by
   * default). Deploy the new `key`, then let the old one expire or revoke it. Throws `KeyRollError`.
   */
  async roll(keyId: string, options: KeyRollOptions = {}): Promise<CreatedKey> {
    return (await this.withResponse.roll(keyId, options)).data;
  }
}
