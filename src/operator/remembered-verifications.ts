import { hash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { OperatorTokenRecord } from '../domain/operator-tokens.ts';

/**
 * How long a verification made in storage is trusted while storage does not answer: an operator
 * who used a token or a console session in the last five minutes still sees the status and the
 * console's overview through an outage. It is also the longest a revocation made elsewhere (another
 * instance, the CLI) can take to reach an instance that cannot reach storage.
 */
export const OUTAGE_TRUST_MS = 5 * 60_000;

/** Tokens are few and sessions about a day of logins; far more entries than that are evicted, oldest first. */
const MAX_ENTRIES = 10_000;

/** Which credential was verified: tokens and session ids are remembered apart. */
export type CredentialKind = 'token' | 'session';

interface Remembered {
  readonly token: OperatorTokenRecord;
  readonly verifiedAt: number;
}

/**
 * The operator tokens and console sessions this instance last verified in storage, by the SHA-256 of
 * the credential (never the credential), with when. Read only while storage does not answer, and only
 * for reads that show the instance's state (operator-auth.ts says which): storage decides whenever it
 * answers, so a refusal there ends a remembered verification at once.
 */
export class RememberedVerifications {
  private readonly clock: Clock;
  private readonly trustMs: number;
  /** Oldest verification first: an entry verified again is moved to the end. */
  private readonly entries = new Map<string, Remembered>();

  constructor(clock: Clock, trustMs = OUTAGE_TRUST_MS) {
    this.clock = clock;
    this.trustMs = trustMs;
  }

  /** Storage has just accepted the credential. */
  remember(kind: CredentialKind, credential: string, token: OperatorTokenRecord): void {
    const key = keyOf(kind, credential);
    const now = this.clock.now();
    this.entries.delete(key);
    this.entries.set(key, { token, verifiedAt: now });
    this.dropExpired(now);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(oldest);
    }
  }

  /** Storage has refused the credential, or its session ended. */
  forget(kind: CredentialKind, credential: string): void {
    this.entries.delete(keyOf(kind, credential));
  }

  /** The token storage accepted the credential for within the trusted time; undefined otherwise. */
  recall(kind: CredentialKind, credential: string): OperatorTokenRecord | undefined {
    const now = this.clock.now();
    const entry = this.entries.get(keyOf(kind, credential));
    if (entry === undefined || !this.trusted(entry, now)) return undefined;
    return entry.token;
  }

  get size(): number {
    return this.entries.size;
  }

  private trusted(entry: Remembered, now: number): boolean {
    return now - entry.verifiedAt < this.trustMs && now >= entry.verifiedAt;
  }

  private dropExpired(now: number): void {
    for (const [key, entry] of this.entries) {
      if (this.trusted(entry, now)) return;
      this.entries.delete(key);
    }
  }
}

function keyOf(kind: CredentialKind, credential: string): string {
  return hash('sha256', `${kind}:${credential}`, 'base64url');
}
