import { hash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { auditTime, type AuditChange, type AuditContext } from '../domain/audit.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { AuditStore } from '../domain/audit.ts';
import type { OperatorSessionStore } from '../domain/operator-sessions.ts';
import type { OperatorTokenRecord, OperatorTokenStore, StoredOperatorToken } from '../domain/operator-tokens.ts';
import { auditedChange, type ChangeDone } from '../audit/audited-change.ts';

/**
 * Operator token format: `pso_` + 16 base62 characters (the id, stored as is and shown in listings)
 * + `_` + 32 base62 characters (the secret: 190 bits, stored only as its SHA-256). The prefix differs
 * from API keys' `pst_`, so neither is ever mistaken for the other, and secret scanners and the log
 * redaction recognise it.
 */
export const OPERATOR_TOKEN_PREFIX = 'pso_';
const ID_LENGTH = 16;
const SECRET_LENGTH = 32;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_PATTERN = new RegExp(
  `^${OPERATOR_TOKEN_PREFIX}([0-9A-Za-z]{${ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})$`,
);
const ID_PATTERN = new RegExp(`^[0-9A-Za-z]{${ID_LENGTH}}$`);

/** Longest label, in characters. */
export const TOKEN_NAME_MAX = 64;
/** Anything but printable ASCII and U+00A0 onwards: C0, DEL and C1 controls. */
const CONTROL_CHARACTERS = /[^\x20-\x7e\u00a0-\u{10ffff}]/u;

/** Last-used times are written at most this often per token: a console polls every few seconds. */
const LAST_USED_EVERY_MS = 60_000;

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** The secret is 190 random bits, so one fast SHA-256 is enough; a slow KDF buys nothing here. */
function hashSecret(secret: string): string {
  return hash('sha256', secret, 'base64url');
}

export interface CreatedOperatorToken {
  /** The plaintext token: shown once, never stored. */
  readonly token: string;
  readonly record: OperatorTokenRecord;
}

/** A token as the command-line tool's `--json` and the admin API show it: times in ISO 8601, no secret, no hash. */
export interface OperatorTokenView {
  readonly id: string;
  readonly name: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export function operatorTokenView(token: OperatorTokenRecord): OperatorTokenView {
  const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: token.id,
    name: token.name,
    createdAt: new Date(token.createdAt).toISOString(),
    lastUsedAt: isoOrNull(token.lastUsedAt),
    revokedAt: isoOrNull(token.revokedAt),
  };
}

/** Why a presented token was refused; for logs only: every refusal answers the same 401. */
export type OperatorTokenRejection = 'malformed' | 'unknown' | 'wrong_secret' | 'revoked';

export type OperatorTokenVerdict =
  | { readonly ok: true; readonly token: OperatorTokenRecord }
  | { readonly ok: false; readonly reason: OperatorTokenRejection };

/** Where tokens are kept, and the console sessions a revocation ends. */
export interface OperatorTokenStores {
  readonly operatorTokens: OperatorTokenStore;
  readonly operatorSessions: OperatorSessionStore;
}

/**
 * Tokens of the operator listener (admin API and console): created from the CLI, listed, revoked,
 * and verified on every operator request. Verification reads storage each time, without a cache:
 * operator requests are few, and a revocation then takes effect on every instance at once.
 */
export class OperatorTokenService {
  private readonly store: OperatorTokenStore;
  private readonly sessions: OperatorSessionStore;
  private readonly clock: Clock;
  /** Where creations and revocations are recorded; without it they cannot be (only verification needs none). */
  private readonly audit: AuditStore | undefined;
  /** When each token's last use was last written by this process. */
  private readonly lastWritten = new Map<string, number>();

  constructor(stores: OperatorTokenStores, clock: Clock, audit?: AuditStore) {
    this.store = stores.operatorTokens;
    this.sessions = stores.operatorSessions;
    this.clock = clock;
    this.audit = audit;
  }

  /** `by`: who asks, recorded in the audit trail with the change (a revocation takes it too). */
  async create(name?: string, by?: AuditContext): Promise<CreatedOperatorToken> {
    const label = checkName(name);
    const id = randomBase62(ID_LENGTH);
    const secret = randomBase62(SECRET_LENGTH);
    return this.change(by, async (now, tokens) => {
      const record = await tokens.create({ id, hash: hashSecret(secret), name: label }, now);
      const change = tokenChange('operator_token.create', id, null, { name: label });
      return { result: { token: `${OPERATOR_TOKEN_PREFIX}${id}_${secret}`, record }, change };
    });
  }

  list(): Promise<OperatorTokenRecord[]> {
    return this.store.list();
  }

  /**
   * Revokes the token and ends its console sessions. A session is refused from the revocation on
   * even if ending it fails: each use of a session reads its token's revocation too.
   */
  async revoke(id: string, by?: AuditContext): Promise<OperatorTokenRecord> {
    const revoked = await this.change(by, async (now, tokens) => {
      const before = ID_PATTERN.test(id) ? await tokens.findById(id) : undefined;
      const after = before && (await tokens.revoke(id, now)) ? await tokens.findById(id) : undefined;
      if (!before || !after) throw new NotFoundError(`no operator token with id '${id}'`);
      const revoked = (token: StoredOperatorToken) => ({ revokedAt: auditTime(token.revokedAt) });
      return {
        result: withoutHash(after),
        change: tokenChange('operator_token.revoke', id, revoked(before), revoked(after)),
      };
    });
    await this.sessions.endForToken(id, this.clock.now());
    return revoked;
  }

  /** The change, in one transaction with its audit entry when `by` is known. */
  private change<T>(
    by: AuditContext | undefined,
    work: (now: number, tokens: OperatorTokenStore) => Promise<ChangeDone<T>>,
  ): Promise<T> {
    const now = this.clock.now();
    if (this.audit !== undefined)
      return auditedChange(this.audit, by, now, ({ operatorTokens }) => work(now, operatorTokens));
    if (by !== undefined) throw new Error('an operator token service without the audit store cannot record a change');
    return work(now, this.store).then(({ result }) => result);
  }

  /**
   * The token's record when `token` is a valid, unrevoked operator token. The secret's hash is
   * compared in constant time, so the time taken says nothing about how much of it was right.
   */
  async verify(token: string): Promise<OperatorTokenVerdict> {
    const match = TOKEN_PATTERN.exec(token);
    if (!match) return { ok: false, reason: 'malformed' };
    const [, id = '', secret = ''] = match;
    const stored = await this.store.findById(id);
    // An unknown id still costs a hash and a comparison, like a known one.
    const expected = Buffer.from(stored?.hash ?? hashSecret(''), 'base64url');
    const presented = Buffer.from(hashSecret(secret), 'base64url');
    const equal = expected.length === presented.length && timingSafeEqual(expected, presented);
    if (!stored) return { ok: false, reason: 'unknown' };
    if (!equal) return { ok: false, reason: 'wrong_secret' };
    if (stored.revokedAt !== null) return { ok: false, reason: 'revoked' };
    this.noteUse(id);
    return { ok: true, token: withoutHash(stored) };
  }

  /**
   * Writes the last use in the background, at most once a minute per token; a failure is tried at the
   * next use. Also for a use through a console session the token logged in.
   */
  noteUse(id: string): void {
    const now = this.clock.now();
    const written = this.lastWritten.get(id);
    if (written !== undefined && now - written < LAST_USED_EVERY_MS) return;
    this.lastWritten.set(id, now);
    this.store.recordLastUsed(id, now).then(
      (done) => {
        if (!done) this.lastWritten.delete(id);
      },
      () => this.lastWritten.delete(id),
    );
  }
}

function tokenChange(
  action: 'operator_token.create' | 'operator_token.revoke',
  id: string,
  before: AuditChange['before'],
  after: AuditChange['after'],
): AuditChange {
  return { action, target: { type: 'operator_token', id }, before, after };
}

function withoutHash(stored: StoredOperatorToken): OperatorTokenRecord {
  const { id, name, createdAt, revokedAt, lastUsedAt } = stored;
  return { id, name, createdAt, revokedAt, lastUsedAt };
}

function checkName(name: string | undefined): string | null {
  if (name === undefined) return null;
  if (name.length === 0 || name.length > TOKEN_NAME_MAX || CONTROL_CHARACTERS.test(name)) {
    throw new ValidationError(
      'invalid_body',
      `the token name must be 1 to ${TOKEN_NAME_MAX} characters without control characters`,
    );
  }
  return name;
}
