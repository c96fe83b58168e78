import type { BackgroundWrite } from './background-write.ts';

/** A token of the operator listener (admin API and console). The secret is never stored. */
export interface OperatorTokenRecord {
  /** Non-secret identifier: the token's public part, shown in listings and used to revoke. */
  readonly id: string;
  /** A label chosen by whoever created it (whose token, what for). */
  readonly name: string | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly lastUsedAt: number | null;
}

export interface NewOperatorToken {
  readonly id: string;
  /** SHA-256 of the token's secret part. */
  readonly hash: string;
  readonly name: string | null;
}

/** A token as verification needs it: with the hash its secret must match. */
export interface StoredOperatorToken extends OperatorTokenRecord {
  readonly hash: string;
}

export interface OperatorTokenStore {
  /** Throws ConflictError when the id is taken. */
  create(token: NewOperatorToken, now: number): Promise<OperatorTokenRecord>;
  findById(id: string): Promise<StoredOperatorToken | undefined>;
  /** Every token, revoked ones included, oldest first. */
  list(): Promise<OperatorTokenRecord[]>;
  /** Returns false when no such token exists. Revoking twice keeps the first time. */
  revoke(id: string, now: number): Promise<boolean>;
  /** A background write (see BackgroundWrite); a time never moves back. False when nothing was written. */
  recordLastUsed(id: string, at: number, mode?: BackgroundWrite): Promise<boolean>;
}
