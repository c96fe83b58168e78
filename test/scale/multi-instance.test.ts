import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { pgBouncerBackend, type Backend } from '../support/backends.ts';
import { errorOf, request, type HttpAnswer } from '../support/http-client.ts';
import { redisClusterBackend } from '../support/redis-cluster.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

/**
 * Three instances of the real server as operators scale them out: behind a load balancer, on a
 * Redis Cluster (three masters, each with a replica) and on PostgreSQL through PgBouncer in
 * transaction mode. The cluster and the pooler are the test run's own (test/support).
 */
const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
// Each rejects (failing this file) when its server is missing and CI=true; otherwise carries a skip reason.
const postgres: Backend = await pgBouncerBackend();
const cluster = await redisClusterBackend();

async function cli(databaseUrl: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl },
  });
  return stdout;
}

/** Waits, if needed, so the next few seconds stay inside one UTC minute (the limiter's window). */
async function awayFromMinuteEdge(seconds: number): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - seconds * 1000)
    await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

describe('three instances on a Redis Cluster and PgBouncer', { skip: postgres.skip ?? cluster.skip }, () => {
  let databaseUrl: string;
  let keyPrefix: string;
  let instances: ServerProcess[] = [];

  before(async () => {
    databaseUrl = postgres.databaseUrl;
    keyPrefix = cluster.keyPrefix();
    // Started together: migrations must be applied exactly once, whoever wins.
    instances = await Promise.all(
      [1, 2, 3].map(() =>
        startServerProcess({
          DATABASE_URL: databaseUrl,
          REDIS_URL: cluster.url,
          REDIS_CLUSTER: 'true',
          REDIS_PREFIX: keyPrefix,
          LOG_LEVEL: 'warn',
          PG_POOL_SIZE: '4',
        }),
      ),
    );
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.kill()));
    await Promise.all([postgres.cleanup(), cluster.cleanup()]);
  });

  async function newKey(plan = 'free'): Promise<{ key: string; account: string }> {
    const account = `multi-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    await cli(databaseUrl, 'account', 'create', '--name', account, '--plan', plan);
    const lines = (await cli(databaseUrl, 'key', 'create', '--account', account)).trim().split('\n');
    return { key: lines[lines.length - 1] as string, account };
  }

  test('200 concurrent requests of one free account over three instances admit exactly 60', async () => {
    const { key } = await newKey();
    await awayFromMinuteEdge(10);
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        request(instances[index % 3] as ServerProcess, '/v1/pets?limit=1', { key }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    assert.equal(statuses.filter((status) => status === 200).length, 60);
    assert.equal(statuses.filter((status) => status === 429).length, 140);
  });

  /** The codes of 150 concurrent requests of a fresh free key, the i-th sent to `instanceOf(i)`. */
  async function burstOf150(instanceOf: (index: number) => ServerProcess): Promise<{
    key: string;
    account: string;
    answers: HttpAnswer[];
  }> {
    const { key, account } = await newKey();
    const answers = await Promise.all(
      Array.from({ length: 150 }, (_, index) => request(instanceOf(index), '/v1/pets?limit=1', { key })),
    );
    return { key, account, answers };
  }

  function splitOf(answers: readonly HttpAnswer[]): Record<string, number> {
    const split: Record<string, number> = {};
    for (const answer of answers) {
      const outcome = answer.status === 200 ? '200' : errorOf(answer).code;
      split[outcome] = (split[outcome] ?? 0) + 1;
      if (outcome === 'key_banned') {
        const retryAfter = Number(answer.headers.get('retry-after'));
        // Up to 901: a request reads the clock as it starts, and one that started a moment before the
        // request that began the ban may be answered after it, its second rounded up.
        assert.ok(retryAfter >= 895 && retryAfter <= 901, `a ban's Retry-After: ${retryAfter}`);
      }
      if (outcome === 'rate_limited') assert.ok(Number(answer.headers.get('retry-after')) <= 60);
    }
    return split;
  }

  test('a ban holds at once everywhere: 150 concurrent requests split alike on one instance and on three', async () => {
    const [first, second, third] = instances as [ServerProcess, ServerProcess, ServerProcess];
    await awayFromMinuteEdge(20);
    const alone = await burstOf150(() => first);
    const partial = await burstOf150((index) => (index % 2 === 0 ? first : second));
    const shared = await burstOf150((index) => instances[index % 3] as ServerProcess);
    const expected = { '200': 60, rate_limited: 11, key_banned: 79 };
    assert.deepEqual(splitOf(alone.answers), expected, 'one instance');
    assert.deepEqual(splitOf(partial.answers), expected, 'two instances');
    assert.deepEqual(splitOf(shared.answers), expected, 'three instances');
    // An instance that has not seen the key yet refuses it as banned too.
    const unseen = await request(third, '/v1/pets?limit=1', { key: partial.key });
    assert.equal(unseen.status, 429);
    assert.equal(errorOf(unseen).code, 'key_banned');

    // Lifted with the CLI (without Redis: through storage only), on every instance within about a second.
    const keys = JSON.parse(await cli(databaseUrl, 'key', 'list', '--account', shared.account, '--json')) as Array<{
      id: string;
      bannedUntil: string | null;
    }>;
    const [banned] = keys;
    assert.ok(banned?.bannedUntil, 'the ban is recorded in storage');
    await cli(databaseUrl, 'ban', 'lift', '--id', banned.id);
    const lifted = performance.now();
    for (const instance of instances) {
      for (;;) {
        const answer = await request(instance, '/v1/pets?limit=1', { key: shared.key });
        if (answer.status === 200 || errorOf(answer).code === 'rate_limited') break;
        const waited = performance.now() - lifted;
        assert.ok(
          waited < 1500,
          `instance ${instance.port} still bans the key ${Math.round(waited)} ms after the lift`,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });

  test('a pet created through one instance is read through the others', async () => {
    const { key } = await newKey('business');
    const [first, ...others] = instances as [ServerProcess, ...ServerProcess[]];
    const json = '{"name":"Shared","categoryId":9007199254740993}';
    const created = await request(first, '/v1/pets', { method: 'POST', key, json });
    assert.equal(created.status, 201);
    const pet = created.text.match(/"id":(\d+)/)?.[1];
    for (const instance of others) {
      const read = await request(instance, `/v1/pets/${pet}`, { key });
      assert.equal(read.status, 200);
      assert.match(read.text, /"categoryId":9007199254740993/);
    }
  });

  test('a key revoked with the CLI is refused by all three within one second', async () => {
    const { key, account } = await newKey('business');
    for (const instance of instances) assert.equal((await request(instance, '/v1/pets?limit=1', { key })).status, 200);
    const keys = JSON.parse(await cli(databaseUrl, 'key', 'list', '--account', account, '--json')) as Array<{
      id: string;
    }>;
    await cli(databaseUrl, 'key', 'revoke', '--id', (keys[0] as { id: string }).id);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const instance of instances) {
      const response = await request(instance, '/v1/pets?limit=1', { key });
      assert.equal(response.status, 401, `instance ${instance.port} still accepts the revoked key`);
    }
  });

  /** The Redis Cluster master that holds an account's counters now. */
  async function masterOfAccount(account: string): Promise<number> {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string }>('SELECT id FROM accounts WHERE name = $1', [account]);
      return await cluster.masterOf(`${keyPrefix}{account:${rows[0]?.id}}:rl`);
    } finally {
      await client.end();
    }
  }

  /** One request per instance at once; the X-RateLimit-Remaining each saw. */
  async function burst(key: string): Promise<{ statuses: number[]; remaining: number[] }> {
    const answers = await Promise.all(instances.map((instance) => request(instance, '/v1/pets?limit=1', { key })));
    return {
      statuses: answers.map((answer) => answer.status),
      remaining: answers.map((answer) => Number(answer.headers.get('x-ratelimit-remaining'))),
    };
  }

  test('a master killed mid-run fails no request; its replica takes over and limits are shared again', async (t) => {
    const { key, account } = await newKey('business');
    const statuses: number[] = [];
    statuses.push(...(await burst(key)).statuses);
    const master = await masterOfAccount(account);
    await cluster.kill(master);
    const killed = performance.now();
    // Shared again when one burst's three requests, one per instance, each saw a count of its own:
    // instances counting in their own memory would report the same remaining.
    let sharedAfterMs: number | undefined;
    while (sharedAfterMs === undefined) {
      const answered = await burst(key);
      statuses.push(...answered.statuses);
      if (new Set(answered.remaining).size === instances.length) sharedAfterMs = performance.now() - killed;
      else assert.ok(performance.now() - killed < 15_000, 'the limiter is shared again within 15 s of the kill');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.diagnostic(`shared again ${Math.round(sharedAfterMs)} ms after the master was killed`);
    assert.deepEqual([...new Set(statuses)], [200], 'every request was answered, none refused or failed');
    // Exact again: a fresh free account on any master, 90 concurrent requests over the three, 60 admitted.
    const fresh = await newKey();
    await awayFromMinuteEdge(10);
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, index) =>
        request(instances[index % 3] as ServerProcess, '/v1/pets?limit=1', { key: fresh.key }),
      ),
    );
    assert.equal(answers.filter((answer) => answer.status === 200).length, 60);
    // The killed node comes back as a replica, for the files that run after this one.
    await cluster.restart(master);
    const ready = await request(instances[0] as ServerProcess, '/readyz');
    assert.equal(ready.status, 200);
    assert.ok(sharedAfterMs < 15_000);
  });
});
