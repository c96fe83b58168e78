import type { ConsumeRequest } from '../src/ratelimit/limiter.ts';

/** Limits no load reaches: every call takes the common path, allowed and counted in both windows. */
const UNREACHED = 1_000_000_000;

/**
 * A key's request as the service makes it (rate-limit-policy.ts): its account's minute and day
 * windows, its key as strike subject, the default ban rule (BAN_THRESHOLD 10, 900 s to 86,400 s).
 */
export function limiterRequest(subject: number): ConsumeRequest {
  return {
    subject: `account:${subject}`,
    windows: [
      { name: 'minute', limit: UNREACHED, seconds: 60 },
      { name: 'day', limit: UNREACHED, seconds: 86_400 },
    ],
    strikeSubject: `key:key_${subject}`,
    ban: { atStrike: 12, baseMs: 900_000, maxMs: 86_400_000 },
  };
}
