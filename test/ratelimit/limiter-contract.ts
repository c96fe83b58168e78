import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type {
  BanRule,
  BanSubject,
  ConsumeRequest,
  ConsumeResult,
  RateLimiter,
  WindowSpec,
  WindowState,
} from '../../src/ratelimit/limiter.ts';

/**
 * The behaviour every RateLimiter (src/ratelimit/limiter.ts) must show, whatever its backend.
 * Subjects carry a random suffix, so a shared backend (Redis) can run it without flushing.
 * Every test passes explicit `now` values, some of them in the past: a backend must take window
 * boundaries and expiry from `now`, never from its own clock (e.g. a relative TTL of
 * `resetAt - now`, not an absolute PEXPIREAT that a past instant would delete at once).
 */
export interface LimiterUnderTest {
  readonly limiter: RateLimiter;
  cleanup(): Promise<void>;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** 12:00:30.000 UTC: mid-minute, mid-day. */
const MID_MINUTE = Date.UTC(2026, 5, 1, 12, 0, 30);

function unique(prefix: string): string {
  return `${prefix}:contract-${randomUUID()}`;
}

function windows(perMinute: number, perDay: number): WindowSpec[] {
  return [
    { name: 'minute', limit: perMinute, seconds: 60 },
    { name: 'day', limit: perDay, seconds: 86_400 },
  ];
}

/** A request of a fresh account, whose refusals count as strikes of a fresh key. */
function struckRequest(perMinute: number, perDay: number): ConsumeRequest {
  return { subject: unique('account'), windows: windows(perMinute, perDay), strikeSubject: unique('key') };
}

function stateOf(result: ConsumeResult, name: string): WindowState {
  const state = result.windows.find((window) => window.name === name);
  assert.ok(state, `the result must report the ${name} window, got ${JSON.stringify(result.windows)}`);
  return state;
}

function nextMinute(now: number): number {
  return now - (now % MINUTE_MS) + MINUTE_MS;
}

function nextMidnight(now: number): number {
  return now - (now % DAY_MS) + DAY_MS;
}

export function limiterContract(name: string, makeLimiter: () => Promise<LimiterUnderTest>): void {
  describe(`RateLimiter contract: ${name}`, () => {
    let underTest: LimiterUnderTest;
    let limiter: RateLimiter;

    beforeEach(async () => {
      underTest = await makeLimiter();
      limiter = underTest.limiter;
    });
    afterEach(async () => {
      await underTest.cleanup();
    });

    /** Consumes `count` times one after the other; returns every result. */
    async function consumeMany(request: ConsumeRequest, now: number, count: number): Promise<ConsumeResult[]> {
      const results: ConsumeResult[] = [];
      for (let i = 0; i < count; i += 1) results.push(await limiter.consume(request, now));
      return results;
    }

    /** A fresh account with these limits, `count` requests admitted at `now`: the next one there is refused. */
    async function filledAt(
      now: number,
      perMinute: number,
      perDay: number,
      count: number,
    ): Promise<{ request: ConsumeRequest; refused: ConsumeResult }> {
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(perMinute, perDay) };
      const filled = await consumeMany(request, now, count);
      assert.ok(filled.every((result) => result.allowed));
      const refused = await limiter.consume(request, now);
      assert.equal(refused.allowed, false);
      return { request, refused };
    }

    it('admits exactly 60 of 200 concurrent requests against a limit of 60', async () => {
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(60, 1000) };
      const results = await Promise.all(Array.from({ length: 200 }, () => limiter.consume(request, MID_MINUTE)));
      const allowed = results.filter((result) => result.allowed);
      assert.equal(allowed.length, 60);
      // Each admitted request saw a distinct remaining count: 59 down to 0.
      const remaining = allowed.map((result) => stateOf(result, 'minute').remaining).sort((a, b) => a - b);
      assert.deepEqual(
        remaining,
        Array.from({ length: 60 }, (_, i) => i),
      );
      for (const result of results.filter((candidate) => !candidate.allowed)) {
        assert.equal(stateOf(result, 'minute').remaining, 0);
        assert.equal(stateOf(result, 'day').remaining, 940);
      }
      const after = await limiter.consume(request, MID_MINUTE);
      assert.equal(after.allowed, false);
      assert.equal(stateOf(after, 'day').remaining, 940, 'the day counted exactly the 60 admitted requests');
    });

    it('counts an admitted request once in both windows and reports both, in request order', async () => {
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(10, 100) };
      const results = await consumeMany(request, MID_MINUTE, 3);
      for (const [index, result] of results.entries()) {
        assert.equal(result.allowed, true);
        assert.deepEqual(
          result.windows.map((window) => window.name),
          ['minute', 'day'],
        );
        assert.equal(stateOf(result, 'minute').remaining, 10 - (index + 1));
        assert.equal(stateOf(result, 'day').remaining, 100 - (index + 1));
        assert.equal(stateOf(result, 'minute').limit, 10);
        assert.equal(stateOf(result, 'day').limit, 100);
        assert.equal(stateOf(result, 'minute').seconds, 60);
        assert.equal(stateOf(result, 'day').seconds, 86_400);
        assert.equal(result.strikes, 0, 'an admitted request carries no strike');
      }
    });

    it('keeps subjects apart', async () => {
      const first: ConsumeRequest = { subject: unique('account'), windows: windows(2, 100) };
      const second: ConsumeRequest = { subject: unique('account'), windows: windows(2, 100) };
      await consumeMany(first, MID_MINUTE, 3);
      const result = await limiter.consume(second, MID_MINUTE);
      assert.equal(result.allowed, true);
      assert.equal(stateOf(result, 'minute').remaining, 1);
    });

    it('counts nothing for a refused request, in either window', async () => {
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(2, 10) };
      const admitted = await consumeMany(request, MID_MINUTE, 2);
      assert.ok(admitted.every((result) => result.allowed));
      const refused = await consumeMany(request, MID_MINUTE, 5);
      for (const result of refused) {
        assert.equal(result.allowed, false);
        assert.equal(stateOf(result, 'minute').remaining, 0);
        assert.equal(stateOf(result, 'day').remaining, 8, 'refused requests must not use up the day');
      }
      const nextMinuteResult = await limiter.consume(request, MID_MINUTE + MINUTE_MS);
      assert.equal(nextMinuteResult.allowed, true);
      assert.equal(stateOf(nextMinuteResult, 'minute').remaining, 1);
      assert.equal(stateOf(nextMinuteResult, 'day').remaining, 7, 'the day holds the 2 + 1 admitted requests only');
    });

    it('lets the day window bind before the minute window (day 100, minute 1000)', async () => {
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(1000, 100) };
      const results = await Promise.all(Array.from({ length: 150 }, () => limiter.consume(request, MID_MINUTE)));
      assert.equal(results.filter((result) => result.allowed).length, 100);
      const refused = await limiter.consume(request, MID_MINUTE);
      assert.equal(refused.allowed, false);
      assert.deepEqual(stateOf(refused, 'day'), {
        name: 'day',
        limit: 100,
        remaining: 0,
        resetAt: nextMidnight(MID_MINUTE),
        seconds: 86_400,
      });
      assert.deepEqual(stateOf(refused, 'minute'), {
        name: 'minute',
        limit: 1000,
        remaining: 900,
        resetAt: nextMinute(MID_MINUTE),
        seconds: 60,
      });
      // A new minute does not help: the day is still full.
      const later = await limiter.consume(request, MID_MINUTE + 5 * MINUTE_MS);
      assert.equal(later.allowed, false);
      assert.equal(stateOf(later, 'day').remaining, 0);
      assert.equal(stateOf(later, 'minute').remaining, 1000, 'the new minute counted nothing');
      // The next UTC day does.
      const tomorrow = await limiter.consume(request, nextMidnight(MID_MINUTE));
      assert.equal(tomorrow.allowed, true);
      assert.equal(stateOf(tomorrow, 'day').remaining, 99);
    });

    it('rolls the minute window over at the UTC minute boundary, not 60 s after the first request', async () => {
      const lastHalfSecond = Date.UTC(2026, 5, 1, 12, 0, 59, 500);
      const { request, refused } = await filledAt(lastHalfSecond, 3, 100, 3);
      assert.equal(stateOf(refused, 'minute').resetAt, Date.UTC(2026, 5, 1, 12, 1, 0));
      const rolled = await limiter.consume(request, lastHalfSecond + 1000);
      assert.equal(rolled.allowed, true);
      assert.equal(stateOf(rolled, 'minute').remaining, 2);
      assert.equal(stateOf(rolled, 'minute').resetAt, Date.UTC(2026, 5, 1, 12, 2, 0));
      assert.equal(stateOf(rolled, 'day').remaining, 96);
    });

    it('rolls the day window over at UTC midnight', async () => {
      const beforeMidnight = Date.UTC(2026, 0, 1, 23, 59, 59, 500);
      const { request, refused } = await filledAt(beforeMidnight, 1000, 5, 5);
      assert.equal(stateOf(refused, 'day').resetAt, Date.UTC(2026, 0, 2));
      const afterMidnight = beforeMidnight + 1000;
      const rolled = await limiter.consume(request, afterMidnight);
      assert.equal(rolled.allowed, true);
      assert.equal(stateOf(rolled, 'day').remaining, 4);
      assert.equal(stateOf(rolled, 'day').resetAt, Date.UTC(2026, 0, 3));
      assert.equal(stateOf(rolled, 'minute').remaining, 999);
    });

    it('never reports remaining below 0', async () => {
      const request = struckRequest(1, 1);
      const results = await Promise.all(Array.from({ length: 30 }, () => limiter.consume(request, MID_MINUTE)));
      for (const result of results) {
        for (const window of result.windows)
          assert.ok(window.remaining >= 0, `remaining ${window.remaining} in ${window.name}`);
      }
      assert.equal(results.filter((result) => result.allowed).length, 1);
    });

    it('reports resetAt aligned to the UTC minute and the UTC day', async () => {
      const instants = [
        Date.UTC(2026, 5, 1, 12, 0, 0),
        Date.UTC(2026, 5, 1, 12, 0, 0, 1),
        Date.UTC(2026, 5, 1, 12, 0, 59, 999),
        Date.UTC(2026, 0, 1, 0, 0, 0),
        Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      ];
      for (const now of instants) {
        const result = await limiter.consume({ subject: unique('account'), windows: windows(10, 10) }, now);
        assert.equal(
          stateOf(result, 'minute').resetAt,
          nextMinute(now),
          `minute reset for ${new Date(now).toISOString()}`,
        );
        assert.equal(stateOf(result, 'day').resetAt, nextMidnight(now), `day reset for ${new Date(now).toISOString()}`);
        assert.equal(stateOf(result, 'minute').resetAt % MINUTE_MS, 0);
        assert.equal(stateOf(result, 'day').resetAt % DAY_MS, 0);
      }
    });

    it('counts strikes only for refused requests that name a strike subject', async () => {
      const subject = unique('account');
      const strikeSubject = unique('key');
      const struck: ConsumeRequest = { subject, windows: windows(2, 100), strikeSubject };
      const unstruck: ConsumeRequest = { subject, windows: windows(2, 100) };
      const admitted = await consumeMany(struck, MID_MINUTE, 2);
      assert.deepEqual(
        admitted.map((result) => result.strikes),
        [0, 0],
      );
      const refusedWithout = await consumeMany(unstruck, MID_MINUTE, 3);
      assert.ok(refusedWithout.every((result) => !result.allowed && result.strikes === 0));
      const refused = await consumeMany(struck, MID_MINUTE, 4);
      assert.deepEqual(
        refused.map((result) => result.strikes),
        [1, 2, 3, 4],
        'the requests without a strike subject did not strike anyone',
      );
      // Another key of the same subject has its own strikes.
      const other = await limiter.consume(
        { subject, windows: windows(2, 100), strikeSubject: unique('key') },
        MID_MINUTE,
      );
      assert.equal(other.strikes, 1);
    });

    it('forgets strikes once the blocking window has ended', async () => {
      const request = struckRequest(1, 100);
      await limiter.consume(request, MID_MINUTE);
      const refused = await consumeMany(request, MID_MINUTE, 3);
      assert.deepEqual(
        refused.map((result) => result.strikes),
        [1, 2, 3],
      );
      const next = nextMinute(MID_MINUTE);
      const admitted = await limiter.consume(request, next);
      assert.equal(admitted.allowed, true);
      assert.equal(admitted.strikes, 0);
      const refusedAgain = await limiter.consume(request, next + 1000);
      assert.equal(refusedAgain.allowed, false);
      assert.equal(refusedAgain.strikes, 1, 'strikes start over in the new window');
    });

    it('keeps strikes while the day window blocks, across minutes', async () => {
      const request = struckRequest(100, 1);
      await limiter.consume(request, MID_MINUTE);
      assert.equal((await limiter.consume(request, MID_MINUTE)).strikes, 1);
      assert.equal((await limiter.consume(request, MID_MINUTE + 5 * MINUTE_MS)).strikes, 2, 'the day still blocks');
      const tomorrow = nextMidnight(MID_MINUTE);
      assert.equal((await limiter.consume(request, tomorrow)).allowed, true);
      assert.equal((await limiter.consume(request, tomorrow)).strikes, 1);
    });

    it('liftBan forgets a subject’s strikes, even without a ban', async () => {
      const strikeSubject = unique('key');
      const request: ConsumeRequest = { subject: unique('account'), windows: windows(1, 100), strikeSubject };
      await limiter.consume(request, MID_MINUTE);
      await consumeMany(request, MID_MINUTE, 5);
      assert.equal(
        await limiter.liftBan({ subject: request.subject, strikeSubject }, MID_MINUTE),
        false,
        'no ban was in force',
      );
      const result = await limiter.consume(request, MID_MINUTE);
      assert.equal(result.allowed, false);
      assert.equal(result.strikes, 1);
      // Lifting for an unknown subject is harmless.
      assert.equal(
        await limiter.liftBan({ subject: request.subject, strikeSubject: unique('key') }, MID_MINUTE),
        false,
      );
    });

    it('peek reports the state and counts nothing, not even strikes', async () => {
      const subject = unique('account');
      const strikeSubject = unique('key');
      const spec = windows(3, 100);
      const fresh = await limiter.consume({ subject, windows: spec, peek: true }, MID_MINUTE);
      assert.equal(stateOf(fresh, 'minute').remaining, 3);
      assert.equal(stateOf(fresh, 'day').remaining, 100);
      assert.equal(stateOf(fresh, 'minute').resetAt, nextMinute(MID_MINUTE));
      assert.equal(stateOf(fresh, 'day').resetAt, nextMidnight(MID_MINUTE));
      await consumeMany({ subject, windows: spec }, MID_MINUTE, 2);
      for (let i = 0; i < 5; i += 1) {
        const peeked = await limiter.consume({ subject, windows: spec, peek: true }, MID_MINUTE);
        assert.equal(stateOf(peeked, 'minute').remaining, 1);
        assert.equal(stateOf(peeked, 'day').remaining, 98);
      }
      const last = await limiter.consume({ subject, windows: spec, strikeSubject }, MID_MINUTE);
      assert.equal(last.allowed, true, 'peeks used none of the quota');
      assert.equal(stateOf(last, 'minute').remaining, 0);
      for (let i = 0; i < 3; i += 1) {
        const peeked = await limiter.consume({ subject, windows: spec, strikeSubject, peek: true }, MID_MINUTE);
        assert.equal(peeked.strikes, 0);
        assert.equal(stateOf(peeked, 'minute').remaining, 0);
      }
      const refused = await limiter.consume({ subject, windows: spec, strikeSubject }, MID_MINUTE);
      assert.equal(refused.allowed, false);
      assert.equal(refused.strikes, 1, 'peeks struck nobody');
    });

    describe('bans', () => {
      const RULE: BanRule = { atStrike: 3, baseMs: 60_000, maxMs: 150_000 };

      /** Fills a limit-1 minute and strikes until the rule bans; returns the ban-beginning result. */
      async function driveToBan(request: ConsumeRequest, now: number): Promise<ConsumeResult> {
        assert.equal((await limiter.consume(request, now)).allowed, true);
        const refused = await consumeMany(request, now, RULE.atStrike);
        assert.deepEqual(
          refused.map((result) => [result.strikes, result.ban?.began ?? null]),
          [
            [1, null],
            [2, null],
            [3, true],
          ],
        );
        return refused[2] as ConsumeResult;
      }

      it('reports no ban until the rule’s strike, then begins one and reports it to every later request', async () => {
        const subject = unique('account');
        const strikeSubject = unique('key');
        const request: ConsumeRequest = { subject, windows: windows(1, 100), strikeSubject, ban: RULE };
        const began = (await driveToBan(request, MID_MINUTE)).ban;
        assert.deepEqual(began, { until: MID_MINUTE + 60_000, began: true });
        for (const now of [MID_MINUTE, MID_MINUTE + 1000, nextMinute(MID_MINUTE), MID_MINUTE + 59_999]) {
          // Even where the windows have room: the ban comes first, and nothing is counted.
          const banned = await limiter.consume(request, now);
          assert.equal(banned.allowed, false);
          assert.equal(banned.strikes, 0, 'a banned request is no strike');
          assert.deepEqual(banned.ban, { until: MID_MINUTE + 60_000, began: false });
        }
        const peeked = await limiter.consume(
          { subject, windows: windows(1, 100), strikeSubject, peek: true },
          MID_MINUTE,
        );
        assert.deepEqual(peeked.ban, { until: MID_MINUTE + 60_000, began: false }, 'a peek reports the ban');
        assert.equal(stateOf(peeked, 'day').remaining, 99, 'the banned requests counted nowhere');
        // The ban concerns the strike subject only: the counted subject and other strike subjects go on.
        const other = await limiter.consume(
          { subject, windows: windows(1, 100), strikeSubject: unique('key'), ban: RULE },
          nextMinute(MID_MINUTE),
        );
        assert.equal(other.allowed, true);
        assert.equal(other.ban, null);
        // At its end the ban is over.
        const after = await limiter.consume(request, MID_MINUTE + 2 * MINUTE_MS);
        assert.equal(after.allowed, true);
        assert.equal(after.ban, null);
      });

      it('begins one ban in a burst of 150 concurrent requests: 60 admitted, 11 struck, 79 banned', async () => {
        const rule: BanRule = { atStrike: 12, baseMs: 900_000, maxMs: 86_400_000 };
        const request: ConsumeRequest = { ...struckRequest(60, 1000), ban: rule };
        const results = await Promise.all(Array.from({ length: 150 }, () => limiter.consume(request, MID_MINUTE)));
        assert.equal(results.filter((result) => result.allowed).length, 60);
        const struck = results.filter((result) => !result.allowed && result.ban === null);
        assert.deepEqual(
          struck.map((result) => result.strikes).sort((a, b) => a - b),
          Array.from({ length: 11 }, (_, i) => i + 1),
        );
        assert.equal(results.filter((result) => result.ban?.began === true).length, 1);
        const banned = results.filter((result) => result.ban !== null);
        assert.equal(banned.length, 79);
        assert.deepEqual([...new Set(banned.map((result) => result.ban?.until))], [MID_MINUTE + 900_000]);
        assert.equal(stateOf(await limiter.consume({ ...request, peek: true }, MID_MINUTE), 'day').remaining, 940);
      });

      it('doubles a ban beginning within 24 h of the previous one, up to the maximum, then starts over', async () => {
        const request: ConsumeRequest = { ...struckRequest(1, 100), ban: RULE };
        let now = MID_MINUTE;
        const lengths: number[] = [];
        for (let round = 0; round < 4; round += 1) {
          // Each round in a later minute, whose window has room again.
          const ban = (await driveToBan(request, now)).ban;
          assert.ok(ban);
          lengths.push(ban.until - now);
          now = ban.until + 1000;
        }
        assert.deepEqual(lengths, [60_000, 120_000, 150_000, 150_000]);
        // The last ban began more than 24 hours ago: back to the base length.
        now += DAY_MS;
        assert.equal((await driveToBan(request, now)).ban?.until, now + 60_000);
      });

      it('liftBan ends the ban in force (only the one named, if named) and keeps its count for the next', async () => {
        const strikeSubject = unique('key');
        const request: ConsumeRequest = {
          subject: unique('account'),
          windows: windows(1, 100),
          strikeSubject,
          ban: RULE,
        };
        const ban = (await driveToBan(request, MID_MINUTE)).ban;
        assert.ok(ban);
        const until = ban.until;
        assert.equal(until, MID_MINUTE + 60_000);
        const owner: BanSubject = { subject: request.subject, strikeSubject };
        assert.equal(await limiter.liftBan(owner, MID_MINUTE + 1000, until + 1), false, 'another ban');
        assert.notEqual((await limiter.consume(request, MID_MINUTE + 1000)).ban, null, 'still banned');
        assert.equal(await limiter.liftBan(owner, MID_MINUTE + 1000, until), true);
        const lifted = await limiter.consume(request, MID_MINUTE + 1000);
        assert.equal(lifted.ban, null);
        assert.equal(lifted.allowed, false, 'the minute is still full');
        assert.equal(lifted.strikes, 1, 'the strikes before the ban are gone');
        assert.equal(await limiter.liftBan(owner, MID_MINUTE + 1000), false, 'nothing left to lift');
        // The lifted ban still counts: the next one within 24 hours lasts twice as long.
        const later = nextMinute(MID_MINUTE) + 1000;
        const next = await driveToBan(request, later);
        assert.equal(next.ban?.until, later + 120_000);
      });

      it('strikes without a rule never ban', async () => {
        const request = struckRequest(1, 100);
        await limiter.consume(request, MID_MINUTE);
        const refused = await consumeMany(request, MID_MINUTE, 20);
        assert.ok(refused.every((result) => result.ban === null));
        assert.equal(refused.at(-1)?.strikes, 20);
      });
    });
  });
}
