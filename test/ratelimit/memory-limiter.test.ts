import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WindowSpec } from '../../src/ratelimit/limiter.ts';
import { MemoryLimiter, type MemoryLimiterOptions } from '../../src/ratelimit/memory-limiter.ts';
import { limiterContract } from './limiter-contract.ts';

limiterContract('MemoryLimiter', async () => {
  const limiter = new MemoryLimiter();
  return { limiter, cleanup: () => limiter.close() };
});

const MINUTE: WindowSpec[] = [{ name: 'minute', limit: 60, seconds: 60 }];
const BOTH: WindowSpec[] = [
  { name: 'minute', limit: 2, seconds: 60 },
  { name: 'day', limit: 1000, seconds: 86_400 },
];
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);

/** Runs `work` on a MemoryLimiter of its own, and closes it. */
async function withLimiter(
  options: MemoryLimiterOptions,
  work: (limiter: MemoryLimiter) => Promise<void>,
): Promise<void> {
  const limiter = new MemoryLimiter(options);
  try {
    await work(limiter);
  } finally {
    await limiter.close();
  }
}

describe('MemoryLimiter: memory bound', () => {
  it('holds at most maxSubjects per namespace under a flood of 50,000 distinct addresses', async () => {
    await withLimiter({ maxSubjects: 1000 }, async (limiter) => {
      for (let i = 0; i < 50_000; i += 1) {
        const result = await limiter.consume(
          { subject: `address:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, windows: MINUTE },
          NOW,
        );
        assert.equal(result.allowed, true);
      }
      assert.ok(limiter.size() <= 1000, `size ${limiter.size()} exceeds maxSubjects 1000`);
      assert.ok(limiter.size() >= 900, `size ${limiter.size()}: recent subjects should still be held`);
    });
  });

  it('drops the least recently used subject, keeping one that is still active', async () => {
    await withLimiter({ maxSubjects: 10 }, async (limiter) => {
      const busy = 'address:192.0.2.1';
      const large: WindowSpec[] = [{ name: 'minute', limit: 1000, seconds: 60 }];
      await limiter.consume({ subject: busy, windows: large }, NOW);
      for (let i = 0; i < 100; i += 1) {
        await limiter.consume({ subject: `address:198.51.100.${i}`, windows: MINUTE }, NOW);
        await limiter.consume({ subject: busy, windows: large }, NOW);
      }
      assert.ok(limiter.size() <= 10, `size ${limiter.size()}`);
      const result = await limiter.consume({ subject: busy, windows: large, peek: true }, NOW);
      assert.equal(result.windows[0]?.remaining, 1000 - 101, 'the busy subject kept its count');
    });
  });

  it('evicts in least-recently-used order, and a swept subject frees its place', async () => {
    await withLimiter({ maxSubjects: 3 }, async (limiter) => {
      const count = (subject: string): { subject: string; windows: WindowSpec[] } => ({ subject, windows: MINUTE });
      const used = async (subject: string, now = NOW): Promise<number> =>
        60 - ((await limiter.consume({ ...count(subject), peek: true }, now)).windows[0]?.remaining ?? 0);
      for (const subject of ['address:a', 'address:b', 'address:c']) await limiter.consume(count(subject), NOW);
      await limiter.consume(count('address:a'), NOW);
      await limiter.consume(count('address:d'), NOW);
      assert.equal(await used('address:b'), 0, 'b was the least recently used, so it went first');
      // That peek brought b back, evicting c, the least recently used by then.
      assert.deepEqual([await used('address:a'), await used('address:d'), await used('address:c')], [2, 1, 0]);

      const nextMinute = NOW + 60_000;
      limiter.sweep(nextMinute);
      assert.equal(limiter.size(), 0);
      for (const subject of ['address:x', 'address:y', 'address:z']) await limiter.consume(count(subject), nextMinute);
      assert.deepEqual(
        await Promise.all(['address:x', 'address:y', 'address:z'].map((subject) => used(subject, nextMinute))),
        [1, 1, 1],
        'the sweep emptied the namespace: three new subjects fit without evicting one another',
      );
    });
  });

  it('does not let a flood of addresses evict accounts (namespaces are bounded separately)', async () => {
    await withLimiter({ maxSubjects: 100 }, async (limiter) => {
      const account = { subject: 'account:1', windows: BOTH };
      await limiter.consume(account, NOW);
      for (let i = 0; i < 5000; i += 1)
        await limiter.consume({ subject: `address:203.0.113.${i}`, windows: MINUTE }, NOW);
      const second = await limiter.consume(account, NOW);
      assert.equal(second.allowed, true);
      assert.equal(second.windows[0]?.remaining, 0, 'the account kept its first request');
      assert.ok(limiter.size() <= 101, `size ${limiter.size()}`);
    });
  });

  it('sweep(now) drops every idle subject and strike once its windows have ended', async () => {
    await withLimiter({}, async (limiter) => {
      for (let i = 0; i < 500; i += 1)
        await limiter.consume({ subject: `address:203.0.113.${i}`, windows: MINUTE }, NOW);
      for (let i = 0; i < 50; i += 1) {
        const account = { subject: `account:${i}`, windows: BOTH, strikeSubject: `key:k${i}` };
        for (let j = 0; j < 4; j += 1) await limiter.consume(account, NOW);
      }
      assert.equal(limiter.size(), 500 + 50 + 50, 'addresses, accounts and the strikes of 50 keys');

      limiter.sweep(NOW);
      assert.equal(limiter.size(), 600, 'nothing is idle yet');

      const nextMinute = Date.UTC(2026, 5, 1, 12, 1, 0);
      limiter.sweep(nextMinute);
      // Addresses and strikes (blocked by the minute) are gone; accounts still hold a day window.
      assert.equal(limiter.size(), 50);

      limiter.sweep(Date.UTC(2026, 5, 2));
      assert.equal(limiter.size(), 0);
    });
  });

  it('accounts bytes by key length and returns them when subjects and strikes are swept', async () => {
    await withLimiter({}, async (limiter) => {
      await limiter.consume({ subject: 'address:a', windows: MINUTE }, NOW);
      const short = limiter.bytes();
      await limiter.consume({ subject: `address:b${'x'.repeat(10_000)}`, windows: MINUTE }, NOW);
      assert.ok(limiter.bytes() - short >= 20_000, `a 10,000-character key accounted ${limiter.bytes() - short}`);
      const one: WindowSpec[] = [{ name: 'minute', limit: 1, seconds: 60 }];
      const struck = { subject: 'account:1', windows: one, strikeSubject: `key:${'k'.repeat(5000)}` };
      await limiter.consume(struck, NOW);
      const beforeStrike = limiter.bytes();
      assert.equal((await limiter.consume(struck, NOW)).strikes, 1);
      assert.ok(limiter.bytes() - beforeStrike >= 10_000, 'the strike subject is accounted');
      limiter.sweep(NOW + 60_000);
      assert.equal(limiter.size(), 0);
      assert.equal(limiter.bytes(), 0, 'everything accounted was returned');
    });
  });

  it('accounts a ban in the budget, and sweeps it once it is over and no longer lengthens the next', async () => {
    await withLimiter({}, async (limiter) => {
      const one: WindowSpec[] = [{ name: 'minute', limit: 1, seconds: 60 }];
      const ban = { atStrike: 1, baseMs: 120_000, maxMs: 120_000 };
      const struck = { subject: 'account:1', windows: one, strikeSubject: `key:${'k'.repeat(5000)}`, ban };
      await limiter.consume(struck, NOW);
      const before = limiter.bytes();
      assert.deepEqual((await limiter.consume(struck, NOW)).ban, { until: NOW + 120_000, began: true });
      assert.ok(limiter.bytes() - before >= 10_000, 'the banned subject is accounted');
      limiter.sweep(NOW + 120_000);
      assert.equal(limiter.size(), 1, 'the ban is over, but would still lengthen one within 24 h');
      limiter.sweep(NOW + 86_400_000 + 1);
      assert.equal(limiter.size(), 0);
      assert.equal(limiter.bytes(), 0);
    });
  });

  it('accounts a window a subject is first asked about later, and keeps the counts it had', async () => {
    await withLimiter({}, async (limiter) => {
      const subject = 'account:1';
      await limiter.consume({ subject, windows: MINUTE }, NOW);
      const oneWindow = limiter.bytes();
      const both: WindowSpec[] = [MINUTE[0] as WindowSpec, { name: 'day', limit: 1000, seconds: 86_400 }];
      const result = await limiter.consume({ subject, windows: both }, NOW);
      assert.deepEqual(
        result.windows.map((window) => window.remaining),
        [58, 999],
      );
      assert.ok(limiter.bytes() > oneWindow, `the day counter is accounted: ${oneWindow} → ${limiter.bytes()}`);
      assert.equal(limiter.size(), 1);
    });
  });

  it('keeps counting the subject in use when the byte budget is smaller than it', async () => {
    await withLimiter({ maxBytes: 1000 }, async (limiter) => {
      const huge = { subject: `address:${'h'.repeat(5000)}`, windows: MINUTE };
      await limiter.consume({ subject: 'address:small', windows: MINUTE }, NOW);
      assert.equal((await limiter.consume(huge, NOW)).windows[0]?.remaining, 59);
      assert.equal((await limiter.consume(huge, NOW)).windows[0]?.remaining, 58, 'the huge subject kept its count');
      assert.equal(limiter.size(), 1, 'the small subject was evicted to make room');
      await limiter.consume({ subject: 'address:small', windows: MINUTE }, NOW);
      assert.ok(limiter.bytes() <= 1000, `back within the budget: ${limiter.bytes()}`);
    });
  });

  it('sweeps by itself with the injected time source', async () => {
    let now = NOW;
    await withLimiter({ sweepEveryMs: 20, now: () => now }, async (limiter) => {
      for (let i = 0; i < 100; i += 1)
        await limiter.consume({ subject: `address:203.0.113.${i}`, windows: MINUTE }, NOW);
      assert.equal(limiter.size(), 100);
      now = NOW + 60_000;
      const deadline = Date.now() + 2000;
      while (limiter.size() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(limiter.size(), 0);
    });
  });
});
