import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { COMMAND_SPECS } from '../../src/cli/command-line.ts';
import { openStore } from '../../src/storage/open-store.ts';
import type { AuditEntryRecord } from '../../src/domain/audit.ts';
import { NODE_CLI, runCliInProcess, runCliLaunched, type CliResult } from '../support/cli-runner.ts';

/**
 * The CLI's changes in the audit trail (docs/operations.md, "Audit trail"): each command that
 * changes something records it with the actor `cli` and the OS user who ran it, and no request id;
 * a command that fails records nothing. Each test works on its own SQLite store.
 */

interface Box {
  readonly directory: string;
  readonly env: Record<string, string>;
  /** Runs a command that must work; its last line of output. */
  ok(...args: string[]): Promise<string>;
  run(...args: string[]): Promise<CliResult>;
  /** The trail as storage holds it, newest first. */
  entries(): Promise<AuditEntryRecord[]>;
}

function sandbox(t: TestContext): Box {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-cli-audit-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const env = { DATABASE_URL: `sqlite:${join(directory, 'db')}` };
  const run = (...args: string[]) => runCliInProcess(args, env);
  return {
    directory,
    env,
    run,
    async ok(...args) {
      const result = await run(...args);
      assert.equal(result.status, 0, `petstore ${args.join(' ')}: ${result.stderr}`);
      return result.stdout.trim().split('\n').at(-1) ?? '';
    },
    async entries() {
      const store = await openStore(loadConfig(env));
      try {
        return await store.audit.list({ limit: 200 });
      } finally {
        await store.close();
      }
    },
  };
}

describe('the audit trail of the CLI', { concurrency: true }, () => {
  it('records each change with the actor cli, the OS user and no request id', async (t) => {
    const box = sandbox(t);
    const started = Date.now();
    await box.ok('account', 'create', '--name', 'acme', '--plan', 'pro');
    await box.ok(...'account set-plan --name acme --plan enterprise --per-minute 9 --per-day 99'.split(' '));
    await box.ok(...'account set-key-limit --name acme --key-limit 5'.split(' '));
    const created = await box.ok('key', 'create', '--account', 'acme', '--scopes', 'pets:read', '--json');
    const key = JSON.parse(created) as { id: string; key: string };
    // A ban as the server records one.
    const store = await openStore(loadConfig(box.env));
    const until = Date.now() + 3_600_000;
    await store.bans.ban(key.id, Date.now(), until).finally(() => store.close());
    await box.ok('ban', 'lift', '--id', key.id);
    await box.ok('key', 'revoke', '--id', key.id);
    const token = await box.ok('operator', 'token', 'create', '--name', 'laptop');
    const tokenId = token.split('_')[1] as string;
    await box.ok('operator', 'token', 'revoke', '--id', tokenId);
    // Reading changes nothing, and records nothing.
    await box.ok('account', 'list');
    await box.ok('key', 'list', '--account', 'acme');
    await box.ok('operator', 'token', 'list');

    const entries = [...(await box.entries())].reverse();
    const user = userInfo().username;
    for (const entry of entries) {
      assert.deepEqual(entry.actor, { kind: 'cli', user });
      assert.equal(entry.requestId, null);
      assert.ok(entry.at >= started && entry.at <= Date.now(), `at ${entry.at}: when the command ran`);
    }
    // Every command ran above but those that only read, and serve and migrate (no account, key or token).
    const changing = COMMAND_SPECS.map((spec) => spec.name).filter(
      (name) => !['serve', 'migrate', 'help', 'version'].includes(name) && !/ (list|show)$/.test(name),
    );
    assert.deepEqual(changing, [
      'account create',
      'account set-plan',
      'account set-key-limit',
      'key create',
      'key revoke',
      'ban lift',
      'operator token create',
      'operator token revoke',
    ]);
    const revokedAt = (after: AuditEntryRecord | undefined) => after?.after?.revokedAt;
    assert.deepEqual(
      entries.map(({ action, target, before, after }) => ({ action, target, before, after })),
      [
        {
          action: 'account.create',
          target: { type: 'account', id: 'acme' },
          before: null,
          after: { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } },
        },
        {
          action: 'account.update',
          target: { type: 'account', id: 'acme' },
          before: { plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } },
          after: { plan: 'enterprise', limits: { perMinute: 9, perDay: 99 } },
        },
        {
          action: 'account.update',
          target: { type: 'account', id: 'acme' },
          before: { keyLimit: 20 },
          after: { keyLimit: 5 },
        },
        {
          action: 'key.create',
          target: { type: 'key', id: key.id },
          before: null,
          after: { account: 'acme', expiresAt: null, scopes: ['pets:read'] },
        },
        {
          action: 'ban.lift',
          target: { type: 'key', id: key.id },
          before: { bannedUntil: new Date(until).toISOString() },
          after: { bannedUntil: null },
        },
        {
          action: 'key.revoke',
          target: { type: 'key', id: key.id },
          before: { revokedAt: null },
          after: { revokedAt: revokedAt(entries[5]) },
        },
        {
          action: 'operator_token.create',
          target: { type: 'operator_token', id: tokenId },
          before: null,
          after: { name: 'laptop' },
        },
        {
          action: 'operator_token.revoke',
          target: { type: 'operator_token', id: tokenId },
          before: { revokedAt: null },
          after: { revokedAt: revokedAt(entries[7]) },
        },
      ],
    );
    for (const revocation of [entries[5], entries[7]]) assert.match(String(revokedAt(revocation)), /^\d{4}-.*Z$/);
    const stored = JSON.stringify(entries);
    for (const secret of [key.key, token]) assert.ok(!stored.includes(secret), 'no secret is stored');
  });

  it('records nothing of a command that fails', async (t) => {
    const box = sandbox(t);
    await box.ok('account', 'create', '--name', 'taken', '--plan', 'free');
    const failing = [
      ['account', 'create', '--name', 'taken', '--plan', 'pro'],
      ['account', 'set-plan', '--name', 'nobody', '--plan', 'pro'],
      ['account', 'set-plan', '--name', 'taken', '--plan', 'enterprise'],
      ['key', 'create', '--account', 'nobody'],
      ['key', 'revoke', '--id', 'key_nope'],
      ['ban', 'lift', '--id', 'key_nope'],
      ['operator', 'token', 'revoke', '--id', 'AbCdEfGh01234567'],
      ['operator', 'token', 'create', '--name', 'bad\u001bname'],
    ];
    for (const args of failing) assert.notEqual((await box.run(...args)).status, 0, args.join(' '));
    const key = JSON.parse(await box.ok('key', 'create', '--account', 'taken', '--json')) as { id: string };
    const notBanned = await box.run('ban', 'lift', '--id', key.id);
    assert.equal(notBanned.status, 1, notBanned.stderr);
    assert.match(notBanned.stderr, /not banned/);
    assert.deepEqual(
      (await box.entries()).map((entry) => entry.action),
      ['key.create', 'account.create'],
      'only what was made',
    );
  });

  it(
    'names the login the environment gives when the system knows no user of the process',
    { skip: whyNoOtherUid() },
    async (t) => {
      const box = sandbox(t);
      // A uid the system's user database does not have; the store's directory open to it.
      chmodSync(box.directory, 0o777);
      const asNobody = (env: Record<string, string>, ...args: string[]) =>
        runCliLaunched(NODE_CLI, args, { ...box.env, ...env }, { uid: 54_321, gid: 54_321 });
      const named = await asNobody({ USER: 'deploy' }, 'account', 'create', '--name', 'a', '--plan', 'free');
      assert.equal(named.status, 0, named.stderr);
      const bare = await asNobody({}, 'account', 'create', '--name', 'b', '--plan', 'free');
      assert.equal(bare.status, 0, bare.stderr);
      assert.deepEqual(
        (await box.entries()).map((entry) => [entry.target.id, entry.actor]),
        [
          ['b', { kind: 'cli', user: 'uid 54321' }],
          ['a', { kind: 'cli', user: 'deploy' }],
        ],
      );
    },
  );
});

/**
 * Why the CLI cannot run here as a uid the system does not know, or false when it can: that needs
 * root, and a checkout (with its pinned Node) that others may reach, which a clone into a private
 * directory (mktemp -d) is not.
 */
function whyNoOtherUid(): string | false {
  if (process.getuid?.() !== 0) return 'needs root, to run the CLI as a uid without a user';
  for (let directory = dirname(process.execPath); directory !== dirname(directory); directory = dirname(directory)) {
    if ((statSync(directory).mode & 0o001) === 0) return `${directory} is closed to other users`;
  }
  return false;
}
