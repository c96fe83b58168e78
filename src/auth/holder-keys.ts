import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import {
  IdempotencyConflictError,
  InsufficientScopeError,
  KeyInactiveError,
  KeyLimitError,
  NotFoundError,
  ValidationError,
} from '../errors.ts';
import { auditTime, type AuditChange, type AuditContext } from '../domain/audit.ts';
import type { AccountRecord } from '../domain/accounts.ts';
import type { ApiKeyRecord, KeyStore } from '../domain/keys.ts';
import type { IdempotencyRecord, IdempotencyScope } from '../domain/pet-store.ts';
import type { KeyPrincipal } from '../domain/principal.ts';
import { checkScopes, type KeyScope } from '../domain/scopes.ts';
import type { Store } from '../domain/store.ts';
import { auditedChange } from '../audit/audited-change.ts';
import type { Page } from './account-service.ts';
import { generateApiKey, generateKeyId, hashApiKey } from './api-key.ts';

/** Where a page of an account's keys starts: after this key, in the order of KeyStore.pageForAccount. */
export interface KeyPosition {
  readonly createdAt: number;
  readonly id: string;
}

/** The key calling, as the API key pipeline verified it, and what of its request the service needs. */
export interface HolderCaller {
  readonly principal: KeyPrincipal;
  /**
   * The caller's own key, in plaintext: a replayed answer, which holds a new key's secret, is stored
   * sealed with it, so that only the key that asked can open it and storage never holds a usable secret.
   */
  readonly secret: string;
  readonly requestId: string;
  /** The request's Idempotency-Key, if it sent one. */
  readonly idempotencyKey: string | undefined;
}

/** What POST /v1/keys asks for. */
export interface NewHolderKey {
  readonly name: string;
  readonly scopes: readonly string[];
  /** From its creation; never expires when absent. */
  readonly expiresInSeconds: number | undefined;
}

/** A key made through the public API, with its plaintext: shown once. */
export interface HolderCreatedKey {
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/** A creation's answer: its body, written by the route, and whether it replays an earlier one. */
export interface HolderAnswer {
  readonly body: string;
  readonly replayed: boolean;
}

/** The grace period of a rolled key, in seconds: how long the old key keeps working. */
export const ROLL_GRACE = { default: 86_400, minimum: 0, maximum: 7 * 86_400 } as const;

/**
 * How long a creation's answer is replayed: the idempotency records' retention, which purges them
 * (pets share the table and the retention).
 */
const REPLAY_MS = 24 * 60 * 60 * 1000;

/** Namespace of the holder's idempotency keys in the records pets share: a space never starts a pet's key. */
const KEYS_NAMESPACE = 'keys ';

/**
 * The account holder's side of keys: what a key holding `keys:manage` does to its own account's
 * keys through the public API. The caller is the verified principal; its account bounds every call,
 * and another account's key is answered as an unknown one. Every change is in the audit trail
 * (`via: key`, the acting key).
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

  /**
   * A new key of the caller's account, with scopes the caller holds, under the account's limit of
   * active keys: counted and created under the account's lock, so concurrent creations never pass it.
   */
  async create(
    caller: HolderCaller,
    choice: NewHolderKey,
    respond: (created: HolderCreatedKey) => string,
  ): Promise<HolderAnswer> {
    const scopes = this.givable(caller.principal, choice.scopes);
    const lifetimeMs = lifetimeOf(choice.expiresInSeconds);
    const fingerprint = fingerprintOf(['create', choice.name, scopes, choice.expiresInSeconds ?? null]);
    return this.idempotent(
      caller,
      fingerprint,
      async (now, keys, account) => {
        await makeRoom(account, keys, now, 0);
        const created = await this.mint(caller, keys, now, { name: choice.name, scopes, lifetimeMs });
        const change = keyChange('key.create', created.record.id, null, creationValues(caller, created.record));
        return { created, changes: [change] };
      },
      respond,
    );
  }

  /**
   * Revokes a key of the caller's account, the caller itself included. Revoking twice keeps the first
   * time; only the first is recorded in the audit trail.
   */
  async revoke(caller: HolderCaller, keyId: string): Promise<ApiKeyRecord> {
    const now = this.clock.now();
    return auditedChange(this.store.audit, auditContextOf(caller), now, async ({ keys }) => {
      const before = await this.ownKey(caller.principal, keys, keyId);
      await keys.revoke(keyId, now, { kind: 'key', id: caller.principal.keyId });
      const after = (await keys.findById(keyId)) ?? before;
      if (before.revokedAt !== null) return { result: after, change: undefined };
      const revoked = (key: ApiKeyRecord) => ({ revokedAt: auditTime(key.revokedAt) });
      return { result: after, change: keyChange('key.revoke', keyId, revoked(before), revoked(after)) };
    });
  }

  /**
   * A new key with the old one's name and scopes, and the old key's expiry brought forward to the end
   * of the grace period (kept when it came sooner). The old key is replaced, so the new one needs no
   * room of its own under the limit; its scopes must still be ones the caller holds.
   */
  async roll(
    caller: HolderCaller,
    keyId: string,
    gracePeriodSeconds: number | undefined,
    respond: (created: HolderCreatedKey) => string,
  ): Promise<HolderAnswer> {
    const grace = gracePeriodSeconds ?? ROLL_GRACE.default;
    if (!Number.isSafeInteger(grace) || grace < ROLL_GRACE.minimum || grace > ROLL_GRACE.maximum)
      throw new ValidationError(
        'invalid_body',
        `field 'gracePeriodSeconds' must be an integer from ${ROLL_GRACE.minimum} to ${ROLL_GRACE.maximum} (7 days)`,
      );
    const fingerprint = fingerprintOf(['roll', keyId, grace]);
    return this.idempotent(
      caller,
      fingerprint,
      async (now, keys, account) => {
        const old = await this.ownKey(caller.principal, keys, keyId);
        if (old.revokedAt !== null || (old.expiresAt !== null && old.expiresAt <= now))
          throw new KeyInactiveError(
            `the key '${keyId}' is ${old.revokedAt !== null ? 'revoked' : 'expired'}: only an active key can be ` +
              'rolled; create a new one',
          );
        const scopes = this.givable(caller.principal, old.scopes);
        await makeRoom(account, keys, now, 1);
        const lifetimeMs = old.expiresAt === null ? undefined : old.expiresAt - old.createdAt;
        const created = await this.mint(caller, keys, now, { name: old.name, scopes, lifetimeMs });
        await keys.expireBy(keyId, now + grace * 1000);
        const expired = (await keys.findById(keyId)) ?? old;
        const rolled = keyChange(
          'key.roll',
          keyId,
          { expiresAt: auditTime(old.expiresAt) },
          { expiresAt: auditTime(expired.expiresAt), successor: created.record.id },
        );
        const creation = keyChange('key.create', created.record.id, null, {
          ...creationValues(caller, created.record),
          rolledFrom: keyId,
        });
        return { created, changes: [creation, rolled] };
      },
      respond,
    );
  }

  /** The scopes named, checked, if the caller holds every one; else 403 naming the first it lacks. */
  private givable(caller: KeyPrincipal, names: readonly string[]): readonly KeyScope[] {
    const scopes = checkScopes(names);
    const lacking = scopes.find((scope) => !caller.scopes.includes(scope));
    if (lacking !== undefined)
      throw new InsufficientScopeError(
        `this API key may not give the scope '${lacking}': a key gives only scopes it holds, and it has ` +
          caller.scopes.join(', '),
      );
    return scopes;
  }

  private async mint(
    caller: HolderCaller,
    keys: KeyStore,
    now: number,
    choice: { name: string | null; scopes: readonly KeyScope[]; lifetimeMs: number | undefined },
  ): Promise<HolderCreatedKey> {
    const key = generateApiKey();
    const record = await keys.create(
      {
        id: generateKeyId(),
        accountId: caller.principal.accountId,
        hash: hashApiKey(key),
        expiresAt: choice.lifetimeMs === undefined ? null : now + choice.lifetimeMs,
        scopes: choice.scopes,
        name: choice.name,
        createdBy: { kind: 'key', id: caller.principal.keyId },
      },
      now,
    );
    return { key, record };
  }

  /** A key of the caller's account; another account's is answered as an unknown one. */
  private async ownKey(caller: KeyPrincipal, keys: KeyStore, keyId: string): Promise<ApiKeyRecord> {
    const found = await keys.findById(keyId);
    if (found === undefined || found.accountId !== caller.accountId)
      throw new NotFoundError(`no key with id '${keyId}' in this account`);
    return found;
  }

  /**
   * Runs a creation in one transaction with its audit entries and, with an Idempotency-Key, its
   * record: a retry finds the record and replays the answer (to the same calling key only, and
   * for the same request) instead of minting a second key.
   */
  private async idempotent(
    caller: HolderCaller,
    fingerprint: string,
    work: (
      now: number,
      keys: KeyStore,
      account: AccountRecord,
    ) => Promise<{ created: HolderCreatedKey; changes: AuditChange[] }>,
    respond: (created: HolderCreatedKey) => string,
  ): Promise<HolderAnswer> {
    const now = this.clock.now();
    const { idempotencyKey } = caller;
    const scope: IdempotencyScope | undefined =
      idempotencyKey === undefined
        ? undefined
        : { accountId: caller.principal.accountId, key: KEYS_NAMESPACE + idempotencyKey };
    return this.store.audit.change<HolderAnswer>(async ({ accounts, keys, idempotency }) => {
      // The account's row, read for its update, first: on PostgreSQL, creations of one account (a retry
      // racing its first attempt among them) wait here for each other, then count and find what the
      // one before committed; SQLite's transactions already take turns.
      const account = await accounts.findByName(caller.principal.accountName);
      if (account === undefined) throw new NotFoundError(`no account named '${caller.principal.accountName}'`);
      const earlier = scope === undefined ? undefined : await idempotency.find(scope);
      if (earlier !== undefined && earlier.createdAt > now - REPLAY_MS)
        return { result: { body: replayOf(caller, fingerprint, earlier), replayed: true }, entry: undefined };
      const { created, changes } = await work(now, keys, account);
      const body = respond(created);
      if (scope !== undefined && idempotencyKey !== undefined) {
        const sealed = seal(caller.principal.keyId, secretFor(caller.secret, idempotencyKey), body);
        await idempotency.store(scope, { fingerprint, createdAt: now, response: { statusCode: 201, body: sealed } });
      }
      const by = auditContextOf(caller);
      return { result: { body, replayed: false }, entry: changes.map((change) => ({ at: now, ...by, ...change })) };
    });
  }
}

/** Refuses a creation past the account's limit of active keys; `replacing` keys are on their way out. */
async function makeRoom(account: AccountRecord, keys: KeyStore, now: number, replacing: number): Promise<void> {
  const held = await keys.countActive(account.id, now);
  if (held - replacing >= account.keyLimit)
    throw new KeyLimitError(
      `the account '${account.name}' holds ${held} active keys and may hold ${account.keyLimit}: revoke one, ` +
        'or let one expire, before creating another',
    );
}

/** Who makes a holder's change: the calling key, through the public API, in its request. */
function auditContextOf(caller: HolderCaller): AuditContext {
  const { keyId, accountName } = caller.principal;
  return { actor: { kind: 'key', id: keyId, account: accountName }, via: 'key', requestId: caller.requestId };
}

function lifetimeOf(expiresInSeconds: number | undefined): number | undefined {
  return expiresInSeconds === undefined ? undefined : expiresInSeconds * 1000;
}

function keyChange(
  action: 'key.create' | 'key.revoke' | 'key.roll',
  keyId: string,
  before: AuditChange['before'],
  after: AuditChange['after'],
): AuditChange {
  return { action, target: { type: 'key', id: keyId }, before, after };
}

function creationValues(caller: HolderCaller, record: ApiKeyRecord): NonNullable<AuditChange['after']> {
  return {
    account: caller.principal.accountName,
    name: record.name,
    expiresAt: auditTime(record.expiresAt),
    scopes: [...record.scopes],
  };
}

function fingerprintOf(values: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(values)).digest('base64url');
}

/** What a stored answer holds: the key that asked, and the answer sealed with that key (AES-256-GCM). */
interface SealedAnswer {
  readonly by: string;
  readonly iv: string;
  readonly tag: string;
  readonly data: string;
}

/** The sealing key of an answer: derived from the calling key's secret and the Idempotency-Key. */
function secretFor(callerSecret: string, idempotencyKey: string): Buffer {
  return createHash('sha256').update(`petstore idempotent key answer\n${callerSecret}\n${idempotencyKey}`).digest();
}

function seal(callerKeyId: string, secret: Buffer, body: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  const data = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  const sealed: SealedAnswer = {
    by: callerKeyId,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
  return JSON.stringify(sealed);
}

/**
 * The earlier answer, opened for the key that asked for it with the same request; any other key of
 * the account, or another request, is refused: the answer holds a secret for its asker alone.
 */
function replayOf(caller: HolderCaller, fingerprint: string, earlier: IdempotencyRecord): string {
  const sealed = parseSealed(earlier.response.body);
  if (sealed === undefined || sealed.by !== caller.principal.keyId)
    throw new IdempotencyConflictError(
      'this Idempotency-Key was already used by another key of the account; the answer, which holds a new ' +
        "key's secret, is replayed only to the key that asked for it: use an Idempotency-Key of your own",
    );
  if (earlier.fingerprint !== fingerprint)
    throw new IdempotencyConflictError('this Idempotency-Key was already used with a different request');
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      secretFor(caller.secret, caller.idempotencyKey ?? ''),
      Buffer.from(sealed.iv, 'base64'),
    );
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new IdempotencyConflictError('this Idempotency-Key was already used by another request');
  }
}

function parseSealed(text: string): SealedAnswer | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { by, iv, tag, data } = parsed as Record<string, unknown>;
    if (typeof by !== 'string' || typeof iv !== 'string' || typeof tag !== 'string' || typeof data !== 'string')
      return undefined;
    return { by, iv, tag, data };
  } catch {
    return undefined;
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
  const id = match?.[2] ?? '';
  if (!Number.isSafeInteger(createdAt) || encodeKeyCursor({ createdAt, id }) !== cursor)
    throw new ValidationError(
      'invalid_query',
      'query parameter \'cursor\' is malformed: use the cursor of a Link rel="next" header unchanged',
    );
  return { createdAt, id };
}
