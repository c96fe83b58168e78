import { hash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { OperatorSessionStore, OperatorTokenRecord, StoredOperatorSession } from '../storage/store.ts';

/** 256 random bits, base64url: what the console's cookie holds, never the token. */
const SESSION_ID_BYTES = 32;
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Last-seen times are written at most this often per session, so a console polling every few
 * seconds writes once a minute. The idle limit is checked against the stored time, which lags the
 * last request by less than this: a session ends after its idle time without requests, or up to this
 * much earlier, never later.
 */
export const LAST_SEEN_EVERY_MS = 60_000;

/** How long a session that is over stays stored: a cookie replayed meanwhile is logged as ended, not unknown. */
const KEEP_ENDED_MS = 24 * 60 * 60 * 1000;

export interface OperatorSessionLimits {
  /** A session ends after this long without a request (OPERATOR_SESSION_IDLE_MINUTES). */
  readonly idleMs: number;
  /** A session ends this long after its login, however busy (OPERATOR_SESSION_MAX_HOURS). */
  readonly maxMs: number;
}

/** Why a session cookie was refused; for logs, and for whether it counts as a failed authentication. */
export type OperatorSessionRejection = 'malformed' | 'unknown' | 'ended' | 'idle' | 'expired' | 'revoked';

export type OperatorSessionVerdict =
  | { readonly ok: true; readonly token: OperatorTokenRecord }
  | { readonly ok: false; readonly reason: OperatorSessionRejection };

/** The id is 256 random bits, so one fast SHA-256 is enough, as for token secrets. */
function hashOf(id: string): string {
  return hash('sha256', id, 'base64url');
}

/**
 * The console's sessions: started by a login with a valid token, checked on every request that
 * carries the cookie, ended by logout, by idle or absolute time, or by revoking their token. Every
 * check reads storage (with the token's revocation, in one query), so an ending made on one instance
 * holds on every instance at once.
 */
export class OperatorSessionService {
  private readonly store: OperatorSessionStore;
  private readonly clock: Clock;
  private readonly limits: OperatorSessionLimits;

  constructor(store: OperatorSessionStore, clock: Clock, limits: OperatorSessionLimits) {
    this.store = store;
    this.clock = clock;
    this.limits = limits;
  }

  /**
   * A new session of the token; its id, for the cookie alone. Sessions over for a day are deleted
   * first, so the table holds about a day of logins and never needs a job of its own.
   */
  async start(token: OperatorTokenRecord): Promise<string> {
    const now = this.clock.now();
    const before = now - KEEP_ENDED_MS;
    await this.store.purge({
      endedBefore: before,
      lastSeenBefore: before - this.limits.idleMs,
      startedBefore: before - this.limits.maxMs,
    });
    const id = randomBytes(SESSION_ID_BYTES).toString('base64url');
    await this.store.start({ hash: hashOf(id), tokenId: token.id }, now);
    return id;
  }

  /** The session's token when the session is open, its token unrevoked, and neither of its times up. */
  async verify(id: string): Promise<OperatorSessionVerdict> {
    if (!SESSION_ID_PATTERN.test(id)) return { ok: false, reason: 'malformed' };
    const key = hashOf(id);
    const session = await this.store.find(key);
    if (session === undefined) return { ok: false, reason: 'unknown' };
    if (session.endedAt !== null) return { ok: false, reason: 'ended' };
    if (session.token.revokedAt !== null) return { ok: false, reason: 'revoked' };
    const now = this.clock.now();
    const over = this.overAt(session);
    if (now >= over.at) {
      // Recorded when it was found over; a failure leaves it open in storage, and refused all the same.
      await this.store.end(key, over.at).catch(() => false);
      return { ok: false, reason: over.reason };
    }
    if (now - session.lastSeenAt >= LAST_SEEN_EVERY_MS) {
      // Awaited, so that the next request, on any instance, sees it. A failure keeps the older time,
      // which can only end the session sooner.
      await this.store.touch(key, now).catch(() => false);
    }
    return { ok: true, token: session.token };
  }

  /** Ends the session of this id, if it is open; false otherwise (unknown, malformed, ended already). */
  async end(id: string): Promise<boolean> {
    if (!SESSION_ID_PATTERN.test(id)) return false;
    return this.store.end(hashOf(id), this.clock.now());
  }

  /** When the session is over by time, and which limit ends it first. */
  private overAt(session: StoredOperatorSession): { readonly at: number; readonly reason: 'idle' | 'expired' } {
    const idle = session.lastSeenAt + this.limits.idleMs;
    const expires = session.startedAt + this.limits.maxMs;
    return expires <= idle ? { at: expires, reason: 'expired' } : { at: idle, reason: 'idle' };
  }
}
