import { hash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import type { OperatorSessionStore, StoredOperatorSession } from '../domain/operator-sessions.ts';
import type { OperatorTokenRecord } from '../domain/operator-tokens.ts';

/** 256 random bits, base64url: what the console's cookie holds, never the token. */
const SESSION_ID_BYTES = 32;
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Last-seen times are written at most once a minute per session, so a console polling every few
 * seconds writes once a minute; and at least every quarter of the idle time, when that is shorter,
 * so that a session used more often than its idle time stays open on every instance. Another
 * instance checks the idle limit against the stored time, which lags the last request by less than
 * this interval: there a session ends after its idle time without requests, or up to this much
 * earlier, never later.
 */
export function lastSeenEveryMs(idleMs: number): number {
  return Math.min(60_000, Math.floor(idleMs / 4));
}

/**
 * Sessions whose last request this instance remembers. Only a valid login makes one, so a few
 * hundred is plenty; a session forgotten is judged by its stored time, which can only end it sooner.
 */
const REMEMBERED_SESSIONS = 1000;

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
  private readonly lastSeenEveryMs: number;
  /** The last request this instance accepted, by session hash: newer than the stored time between writes. */
  private readonly lastUses = new LRUCache<string, number>({ max: REMEMBERED_SESSIONS });

  constructor(store: OperatorSessionStore, clock: Clock, limits: OperatorSessionLimits) {
    this.store = store;
    this.clock = clock;
    this.limits = limits;
    this.lastSeenEveryMs = lastSeenEveryMs(limits.idleMs);
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
    // The stored time lags the last request by up to the write interval; this instance's own is exact.
    const lastSeenAt = Math.max(session.lastSeenAt, this.lastUses.get(key) ?? 0);
    const over = this.overAt(session, lastSeenAt);
    if (now >= over.at) {
      this.lastUses.delete(key);
      // Recorded when it was found over; a failure leaves it open in storage, and refused all the same.
      await this.store.end(key, over.at).catch(() => false);
      return { ok: false, reason: over.reason };
    }
    if (now - session.lastSeenAt >= this.lastSeenEveryMs) {
      // Awaited, so that the next request, on any instance, sees it. A failure keeps the older time,
      // which can only end the session sooner there.
      await this.store.touch(key, now).catch(() => false);
    }
    // A time never moves back, as in storage.
    if (now > lastSeenAt) this.lastUses.set(key, now);
    return { ok: true, token: session.token };
  }

  /** Ends the session of this id, if it is open; false otherwise (unknown, malformed, ended already). */
  async end(id: string): Promise<boolean> {
    if (!SESSION_ID_PATTERN.test(id)) return false;
    const key = hashOf(id);
    this.lastUses.delete(key);
    return this.store.end(key, this.clock.now());
  }

  /** When the session is over by time, and which limit ends it first. */
  private overAt(
    session: StoredOperatorSession,
    lastSeenAt: number,
  ): { readonly at: number; readonly reason: 'idle' | 'expired' } {
    const idle = lastSeenAt + this.limits.idleMs;
    const expires = session.startedAt + this.limits.maxMs;
    return expires <= idle ? { at: expires, reason: 'expired' } : { at: idle, reason: 'idle' };
  }
}
