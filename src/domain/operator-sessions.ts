import type { OperatorTokenRecord } from './operator-tokens.ts';

/** A console session; its id is never stored, only the hash it is found by. */
export interface NewOperatorSession {
  /** SHA-256 of the session id. */
  readonly hash: string;
  readonly tokenId: string;
}

/** A session as each use reads it: its times, and its token as it is now (revoked or not), in one query. */
export interface StoredOperatorSession {
  readonly startedAt: number;
  readonly lastSeenAt: number;
  readonly endedAt: number | null;
  readonly token: OperatorTokenRecord;
}

/** Sessions over before these times: ended, idle since, or started before (each bound alone suffices). */
export interface OperatorSessionCutoffs {
  readonly endedBefore: number;
  readonly lastSeenBefore: number;
  readonly startedBefore: number;
}

export interface OperatorSessionStore {
  /** Starts a session at `now` (its last use too). Throws ConflictError when the hash is taken. */
  start(session: NewOperatorSession, now: number): Promise<void>;
  find(hash: string): Promise<StoredOperatorSession | undefined>;
  /** Records a use of an open session; a time never moves back. False when nothing changed. */
  touch(hash: string, at: number): Promise<boolean>;
  /** Ends the session at `at`; ending twice keeps the first time. False when no open session has that hash. */
  end(hash: string, at: number): Promise<boolean>;
  /** Ends every open session of the token; how many it ended. */
  endForToken(tokenId: string, at: number): Promise<number>;
  /** Deletes the sessions over before the cutoffs; how many went. */
  purge(cutoffs: OperatorSessionCutoffs): Promise<number>;
}
