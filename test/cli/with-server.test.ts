import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/clock.ts';
import {
  assertKeyShape,
  assertOk,
  fieldsOf,
  ISO,
  jsonOf,
  operatorTokenOf,
  tableOf,
  type AccountShowJson,
  type CreatedKeyJson,
  type KeyJson,
  type OperatorTokenJson,
  type WindowJson,
} from '../support/cli-assertions.ts';
import { accountWithKey, createSandbox, getPets, keyOf, sandbox, type Sandbox } from '../support/cli-sandbox.ts';
import { startOperatorListener } from '../support/operator-listener.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The CLI beside a server on the same store: what the server makes of the CLI's keys, plans, bans
 * and operator tokens, and the windows it counted in Redis as `account show` reads them.
 */

/** The `"minute";r=57;t=42, "day";r=997;t=51000` field of a response: remaining per window. */
function remainingOf(headers: Headers): Record<string, number> {
  const field = headers.get('ratelimit') ?? '';
  return Object.fromEntries([...field.matchAll(/"(\w+)";r=(\d+)/g)].map((match) => [match[1], Number(match[2])]));
}

/**
 * The real app in this process over the sandbox's store, as a server sharing it would run: on the
 * system clock, since the CLI's times are the system's. Closed when the test ends.
 */
async function serverOn(box: Sandbox, env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({ env: { DATABASE_URL: box.databaseUrl, ...env }, clock: systemClock });
}

const redis = await redisBackend();

describe('petstore CLI beside a server on the same store', { concurrency: true }, () => {
  after(() => redis.cleanup());

  describe('account show with REDIS_URL', { skip: redis.skip }, () => {
    it('shows the windows a server counted in Redis, and counts nothing itself', async (t) => {
      const box = sandbox(t);
      const env = { REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() };
      const { key } = await accountWithKey(box, 'shared');
      const server = await serverOn(box, env);
      t.after(() => server.close());
      let last = await getPets(server, key);
      for (let call = 1; call < 3; call += 1) last = await getPets(server, key);
      assert.equal(last.status, 200, last.body);
      const shownJson = jsonOf<AccountShowJson>(
        await box.cliWith(env, 'account', 'show', '--name', 'shared', '--json'),
      );
      assert.equal(shownJson.windowsNote, null);
      assert.deepEqual(
        shownJson.windows?.map((window) => window.name),
        ['minute', 'day'],
      );
      const [minute, day] = shownJson.windows as [WindowJson, WindowJson];
      assert.equal(day.limit, 1000);
      assert.equal(day.remaining, remainingOf(last.headers).day, 'the day window as the server counted it');
      assert.equal(Date.parse(day.resetAt) % 86_400_000, 0, 'the day resets at UTC midnight');
      assert.equal(minute.limit, 60);
      // The minute may have turned between the last request and the CLI: then it starts afresh.
      const sameMinute = Date.parse(minute.resetAt) / 1000 === Number(last.headers.get('x-ratelimit-reset'));
      assert.equal(minute.remaining, sameMinute ? remainingOf(last.headers).minute : 60);
      const text = fieldsOf(await box.cliWith(env, 'account', 'show', '--name', 'shared'));
      assert.match(text.get('day window') ?? '', new RegExp(`^${day.remaining} of 1000 left, resets `));
      const next = await getPets(server, key);
      assert.equal(remainingOf(next.headers).day, day.remaining - 1, 'account show counted no request');
    });
  });

  describe('with a running server on the same store', { concurrency: true }, () => {
    const box = createSandbox();
    let server: TestApp;
    let started: TestApp | undefined;

    before(async () => {
      started = await serverOn(box);
      server = started;
    });
    after(async () => {
      await started?.close();
      box.remove();
    });

    it('a key made by key create works at once, and a plan change applies within one second', async () => {
      const { key } = await accountWithKey(box, 'works', ['--plan', 'pro']);
      const first = await getPets(server, key);
      assert.equal(first.status, 200, first.body);
      assert.equal(first.headers.get('x-ratelimit-limit'), '300', 'the pro plan: 300 per minute');
      assertOk(await box.cli('account', 'set-plan', '--name', 'works', '--plan', 'business'));
      await sleep(1000);
      const later = await getPets(server, key);
      assert.equal(later.status, 200, later.body);
      assert.equal(later.headers.get('x-ratelimit-limit'), '1000', 'the business plan applies within one second');
    });

    it('key revoke: the server refuses the key within one second', async () => {
      const { key, id } = await accountWithKey(box, 'revoked');
      const { key: sibling } = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', 'revoked', '--json'));
      assert.equal((await getPets(server, key)).status, 200, 'the key works (and is now cached)');
      assertOk(await box.cli('key', 'revoke', '--id', id));
      await sleep(1000);
      const refused = await getPets(server, key);
      assert.equal(refused.status, 401, `a revoked key is refused within one second: ${refused.body}`);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assert.equal((JSON.parse(refused.body) as { code: string }).code, 'unauthorized');
      assert.equal((await getPets(server, sibling)).status, 200, 'the account’s other key still works');
      assert.match((await keyOf(box, 'revoked', id)).revokedAt ?? '', ISO);
    });

    it('key list shows the last use once it is flushed (every 5 s)', async () => {
      const { key, id } = await accountWithKey(box, 'lastused');
      assert.equal((await keyOf(box, 'lastused', id)).lastUsedAt, null, 'never used yet');
      const sent = Date.now();
      assert.equal((await getPets(server, key)).status, 200);
      let seen: string | null = null;
      // One flush interval, plus room for the CLI runs polling it on a busy machine.
      while (seen === null && Date.now() < sent + 15_000) {
        seen = (await keyOf(box, 'lastused', id)).lastUsedAt;
        if (seen === null) await sleep(250);
      }
      assert.ok(seen !== null, 'lastUsedAt appears within 15 s of the request');
      const usedAt = Date.parse(seen);
      assert.ok(usedAt >= sent - 5 && usedAt <= Date.now(), `lastUsedAt is the time of the request, got ${seen}`);
      const row = tableOf(await box.cli('key', 'list', '--account', 'lastused')).find(
        (candidate) => candidate.ID === id,
      );
      assert.equal(row?.['LAST USED'], seen, 'the human table shows the same last use');
    });

    it('key list shows a ban, and ban lift ends it within one second', async () => {
      const { key, id } = await accountWithKey(box, 'banned', [
        '--plan',
        'enterprise',
        '--per-minute',
        '1',
        '--per-day',
        '1',
      ]);
      assert.equal((await getPets(server, key)).status, 200);
      const codes: string[] = [];
      for (let attempt = 0; attempt < 12; attempt += 1) {
        const answer = await getPets(server, key);
        assert.equal(answer.status, 429, answer.body);
        codes.push((JSON.parse(answer.body) as { code: string }).code);
      }
      assert.equal(codes.at(-1), 'key_banned', `more than 10 requests after a 429 ban the key: ${codes.join(', ')}`);
      const banned = await keyOf(box, 'banned', id);
      assert.ok(
        banned.bannedUntil !== null && Date.parse(banned.bannedUntil) > Date.now(),
        `key list shows the ban, got ${JSON.stringify(banned)}`,
      );
      const row = tableOf(await box.cli('key', 'list', '--account', 'banned')).find((candidate) => candidate.ID === id);
      assert.equal(row?.['BANNED UNTIL'], banned.bannedUntil);

      const lifted = jsonOf<KeyJson>(await box.cli('ban', 'lift', '--id', id, '--json'));
      assertKeyShape(lifted);
      assert.equal(lifted.id, id);
      assert.equal(lifted.bannedUntil, null);
      await sleep(1000);
      const answer = await getPets(server, key);
      assert.equal(answer.status, 429, 'still over the day limit');
      assert.equal(
        (JSON.parse(answer.body) as { code: string }).code,
        'rate_limited',
        'no longer banned within one second of ban lift',
      );
      assert.equal((await keyOf(box, 'banned', id)).bannedUntil, null);
    });

    it('operator token create makes a token for the admin API; operator token revoke refuses it at once', async () => {
      const operator = await startOperatorListener({
        registry: server.services.metrics.registry,
        admin: server.services,
        port: 0,
        host: '127.0.0.1',
      });
      try {
        const created = await box.cli('operator', 'token', 'create', '--name', 'ops laptop');
        const { token, id } = operatorTokenOf(created);
        const status = () =>
          fetch(`${operator.url}/admin/v1/status`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal((await status()).status, 200);
        const listed = jsonOf<OperatorTokenJson[]>(await box.cli('operator', 'token', 'list', '--json')).find(
          (candidate) => candidate.id === id,
        );
        assert.equal(listed?.name, 'ops laptop');
        assert.equal(listed.revokedAt, null);
        assertOk(await box.cli('operator', 'token', 'revoke', '--id', id));
        const refused = await status();
        assert.equal(refused.status, 401, 'refused at once: tokens are not cached');
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="petstore-operator"');
      } finally {
        await operator.close();
      }
    });
  });
});
