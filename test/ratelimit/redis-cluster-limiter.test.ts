import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { ConsumeRequest, WindowSpec } from '../../src/ratelimit/limiter.ts';
import { MemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import { RedisLimiter, RedisTopologyError } from '../../src/ratelimit/redis-limiter.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { redisClusterBackend } from '../support/redis-cluster.ts';
import { startServerProcess } from '../support/server-process.ts';
import { limiterContract } from './limiter-contract.ts';

// Each rejects (failing this file) when its server is missing and CI=true; otherwise carries a skip reason.
const cluster = await redisClusterBackend();
const single = await redisBackend();

/** 12:00:30.000 UTC: mid-minute, mid-day. */
const MID_MINUTE = Date.UTC(2026, 5, 1, 12, 0, 30);
const BOTH = (perMinute: number, perDay: number): WindowSpec[] => [
  { name: 'minute', limit: perMinute, seconds: 60 },
  { name: 'day', limit: perDay, seconds: 86_400 },
];

const opened: RedisLimiter[] = [];
function limiter(url: string, options: { cluster?: boolean; keyPrefix?: string; errors?: Error[] } = {}): RedisLimiter {
  const errors = options.errors;
  const created = new RedisLimiter({
    url,
    cluster: options.cluster ?? true,
    keyPrefix: options.keyPrefix ?? cluster.keyPrefix(),
    fallback: new MemoryLimiter(),
    ...(errors ? { onFallback: (error: Error) => void errors.push(error) } : {}),
  });
  opened.push(created);
  return created;
}

/** Resolves once the limiter reaches every master (a first connection may take longer than one ping's timeout). */
async function connected(each: RedisLimiter): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await each.ping();
    } catch (error) {
      if (attempt === 20) throw error;
    }
  }
}

function unique(prefix: string): string {
  return `${prefix}:${randomUUID()}`;
}

after(async () => {
  await Promise.all(opened.splice(0).map((each) => each.close()));
  await Promise.all([cluster.cleanup(), single.cleanup()]);
});

describe('RedisLimiter on a Redis Cluster (3 masters, 3 replicas)', { skip: cluster.skip }, () => {
  limiterContract('RedisLimiter, REDIS_CLUSTER=true', async () => {
    const created = limiter(cluster.url);
    await connected(created);
    return { limiter: created, cleanup: () => created.close() };
  });

  it('keeps every key of one request in one slot, and spreads accounts over all three masters', async () => {
    const keyPrefix = cluster.keyPrefix();
    const shared = limiter(cluster.url, { keyPrefix });
    await connected(shared);
    const subjects = Array.from({ length: 30 }, () => unique('account'));
    const rule = { atStrike: 2, baseMs: 60_000, maxMs: 60_000 };
    for (const subject of subjects) {
      const request: ConsumeRequest = { subject, windows: BOTH(1, 10), strikeSubject: unique('key'), ban: rule };
      for (let i = 0; i < 3; i += 1) assert.equal((await shared.consume(request, MID_MINUTE)).fallback, false);
    }
    const masters = new Set<number>();
    for (const subject of subjects) {
      const keys = [
        `${keyPrefix}{${subject}}:rl:minute:${MID_MINUTE - 30_000}`,
        `${keyPrefix}{${subject}}:rl:day:${Date.UTC(2026, 5, 1)}`,
      ];
      const owners = new Set(await Promise.all(keys.map((key) => cluster.masterOf(key))));
      assert.equal(owners.size, 1, `one master holds ${subject}'s keys`);
      masters.add([...owners][0] as number);
      const inspect = cluster.client();
      assert.equal(await inspect.get(keys[0] as string), '1');
    }
    assert.equal(masters.size, 3, 'thirty accounts land on all three masters');
  });

  it('admits exactly 60 of 200 concurrent requests spread over 3 instances', async () => {
    const keyPrefix = cluster.keyPrefix();
    const instances = [1, 2, 3].map(() => limiter(cluster.url, { keyPrefix }));
    await Promise.all(instances.map(connected));
    const request: ConsumeRequest = {
      subject: unique('account'),
      windows: BOTH(60, 1000),
      strikeSubject: unique('key'),
    };
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (instances[i % 3] as RedisLimiter).consume(request, MID_MINUTE)),
    );
    assert.equal(results.filter((result) => result.fallback).length, 0, 'no instance fell back');
    assert.equal(results.filter((result) => result.allowed).length, 60);
  });
});

describe('REDIS_CLUSTER must match the server', { skip: cluster.skip ?? single.skip }, () => {
  it('a cluster node given as one Redis is refused at start-up, naming REDIS_CLUSTER', async () => {
    const [first] = cluster.url.split(',');
    const misconfigured = limiter(first as string, { cluster: false });
    await assert.rejects(misconfigured.checkTopology(), (error: Error) => {
      assert.ok(error instanceof RedisTopologyError);
      assert.match(error.message, /REDIS_URL points at a node of a Redis Cluster.*REDIS_CLUSTER=true/);
      return true;
    });
  });

  it('met later (a MOVED answer), it is reported as such and requests are limited per instance', async () => {
    const [first] = cluster.url.split(',');
    const errors: Error[] = [];
    const misconfigured = limiter(first as string, { cluster: false, errors });
    const subjects = Array.from({ length: 12 }, () => unique('account'));
    for (const subject of subjects) {
      const result = await misconfigured.consume({ subject, windows: BOTH(5, 10) }, MID_MINUTE);
      assert.equal(result.allowed, true);
    }
    // A third of the slots are the node's own; the others answer MOVED.
    assert.ok(errors.length > 0, 'some accounts live on other masters');
    for (const error of errors) {
      assert.ok(error instanceof RedisTopologyError, error.message);
      assert.match(error.message, /REDIS_CLUSTER=true.*\(Redis answered MOVED \d+ /);
    }
  });

  it('a lone Redis named as a cluster is refused at start-up', async () => {
    const misconfigured = limiter(single.url, { cluster: true });
    await assert.rejects(
      misconfigured.checkTopology(),
      /REDIS_CLUSTER=true, but the Redis at redis:\/\/.* is not a node/,
    );
  });

  it('the server exits with a one-line error instead of counting per instance', async () => {
    const [first] = cluster.url.split(',');
    await assert.rejects(
      startServerProcess({ DATABASE_URL: 'sqlite::memory:', REDIS_URL: first as string }, { timeoutMs: 15_000 }),
      /exit 1\): petstore: could not start: REDIS_URL points at a node of a Redis Cluster/,
    );
  });
});

describe('REDIS_CLUSTER and REDIS_URL settings', () => {
  const seeds = 'redis://a.internal:7000, redis://b.internal:7000';

  it('REDIS_CLUSTER=true takes a comma-separated list of seed nodes', () => {
    const config = loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: seeds });
    assert.equal(config.redisCluster, true);
    assert.equal(config.redisUrl, seeds);
    assert.equal(loadConfig({ REDIS_URL: 'redis://a.internal:6379' }).redisCluster, false);
  });

  for (const [env, message] of [
    [
      { REDIS_URL: seeds },
      'REDIS_URL lists 2 servers; set REDIS_CLUSTER=true if they are seed nodes of a Redis Cluster',
    ],
    [{ REDIS_CLUSTER: 'true' }, 'REDIS_CLUSTER is set but REDIS_URL is not'],
    [
      { REDIS_CLUSTER: 'true', REDIS_URL: 'redis://a.internal:7000,http://b.internal:7000' },
      'REDIS_URL must be redis:// or rediss:// URLs separated by commas (got "http://b.internal:7000")',
    ],
    [{ REDIS_CLUSTER: 'yes', REDIS_URL: seeds }, 'REDIS_CLUSTER must be one of true, false, 1, 0 (got "yes")'],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && error.message === `invalid configuration: ${message}`,
      );
    });
  }
});
