/** Temporary bans of keys that kept sending after a 429; kept in storage so the CLI can lift them. */
export interface BanStore {
  ban(keyId: string, startedAt: number, until: number): Promise<void>;
  /** Ends the key's active bans; false when it had none. */
  lift(keyId: string, now: number): Promise<boolean>;
  /** Bans of the key that started at or after `since`, lifted or not. */
  countSince(keyId: string, since: number): Promise<number>;
  /**
   * Of these bans (a key and the end its ban was recorded with), the keys whose ban was lifted: one
   * query, for the instances that hold bans to notice a lifting made by another process.
   */
  liftedAmong(bans: readonly RecordedBan[]): Promise<string[]>;
  /**
   * Bans in force at `now` (neither lifted nor over), one per key (its latest end), with the key's
   * account; newest first.
   */
  listActive(now: number): Promise<ActiveBan[]>;
}

export interface ActiveBan {
  readonly keyId: string;
  /** The name of the key's account. */
  readonly account: string;
  readonly startedAt: number;
  readonly until: number;
}

export interface RecordedBan {
  readonly keyId: string;
  readonly until: number;
}
