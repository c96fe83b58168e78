import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALL_SCOPES,
  assertAccount,
  assertFails,
  assertKeyShape,
  assertOk,
  cellsOf,
  fieldsOf,
  ISO,
  jsonOf,
  KEY,
  KEY_TABLE_COLUMNS,
  keyTableOf,
  linesOf,
  SHOW_FIELDS,
  shown,
  tableOf,
  unusedKeyJson,
  type AccountShowJson,
  type CreatedKeyJson,
} from '../support/cli-assertions.ts';
import type { CliResult } from '../support/cli-runner.ts';
import { keysOf, sandbox } from '../support/cli-sandbox.ts';

/**
 * `petstore key create`, `key list`, `key revoke` and `ban lift` (README, "API keys"), and what
 * `account show` lists of the keys, each test on its own SQLite store. Scopes are in
 * test/cli/scopes.test.ts; what a running server makes of the keys in test/cli/with-server.test.ts.
 */

describe('petstore key commands, and ban lift', { concurrency: 4 }, () => {
  it('key create prints the key alone on its last line; --json prints it in an object', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'free'));
    const human = await box.cli('key', 'create', '--account', 'acme');
    assertOk(human);
    const lines = linesOf(human);
    const key = lines.at(-1) ?? '';
    assert.match(key, KEY, `the last line is the key alone\n${shown(human)}`);
    assert.equal(lines.filter((line) => line.includes('pst_')).length, 1, 'the key is printed once');
    const id = /\b(key_[0-9A-Za-z]+)\b/.exec(lines.slice(0, -1).join('\n'))?.[1];
    assert.ok(id, `the key's id is named above it\n${shown(human)}`);

    const created = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', 'acme', '--json'));
    assertKeyShape(created);
    assert.match(created.key, KEY);
    assert.notEqual(created.key, key, 'every key is new');
    assert.equal(created.expiresAt, null);
    assert.equal(created.lastUsedAt, null);
    assert.equal(created.revokedAt, null);
    const listed = await keysOf(box, 'acme');
    assert.deepEqual(listed.map((listedKey) => listedKey.id).sort(), [id, created.id].sort());
    for (const listedKey of listed)
      assert.equal(Object.hasOwn(listedKey, 'key'), false, 'key list never shows the secret');
  });

  it('key create --expires-in 90s|15m|12h|30d|2w sets the expiry', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'free'));
    const durations: Array<[text: string, ms: number]> = [
      ['90s', 90_000],
      ['15m', 15 * 60_000],
      ['12h', 12 * 3_600_000],
      ['30d', 30 * 86_400_000],
      ['2w', 14 * 86_400_000],
    ];
    const created = (
      await box.each(
        ...durations.map(([text]) => ['key', 'create', '--account', 'acme', '--expires-in', text, '--json']),
      )
    ).map((result) => jsonOf<CreatedKeyJson>(result));
    const listed = new Map((await keysOf(box, 'acme')).map((key) => [key.id, key]));
    durations.forEach(([text, ms], index) => {
      const key = created[index] as CreatedKeyJson;
      assert.ok(key.expiresAt !== null, `--expires-in ${text} sets expiresAt`);
      assert.equal(Date.parse(key.expiresAt) - Date.parse(key.createdAt), ms, `--expires-in ${text}`);
      const inList = listed.get(key.id);
      assert.equal(inList?.expiresAt, key.expiresAt, `key list shows the expiry set by --expires-in ${text}`);
    });
  });

  it('key create refuses a bad --expires-in with exit 2, and an unknown account with exit 1', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'free'));
    const bad = ['5y', '0s', '1.5h', '90', '--expires-in=-1d', ''];
    const results = await box.each(
      ...bad.map((value) => [
        'key',
        'create',
        '--account',
        'acme',
        ...(value.startsWith('--') ? [value] : ['--expires-in', value]),
      ]),
    );
    for (const result of results) assertFails(result, 2, /expires-in/);
    assertFails(await box.cli('key', 'create', '--account', 'nobody'), 1, /nobody/);
    assert.deepEqual(await keysOf(box, 'acme'), [], 'refused key creations create nothing');
  });

  it('key list shows creation, last use, expiry and revocation; key revoke marks the key', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'free'));
    const plain = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', 'acme', '--json'));
    const expiring = jsonOf<CreatedKeyJson>(
      await box.cli('key', 'create', '--account', 'acme', '--expires-in', '30d', '--json'),
    );
    const revoked = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', 'acme', '--json'));
    const before = Date.now();
    const revocation = await box.cli('key', 'revoke', '--id', revoked.id);
    assertOk(revocation);
    assert.ok(revocation.stdout.includes(revoked.id), shown(revocation));
    assert.equal(linesOf(revocation).length, 1, shown(revocation));

    const human = await box.cli('key', 'list', '--account', 'acme');
    assert.deepEqual(cellsOf(linesOf(human)[0] ?? ''), KEY_TABLE_COLUMNS);
    const rows = new Map(tableOf(human).map((row) => [row.ID, row]));
    assert.deepEqual([...rows.keys()].sort(), [plain.id, expiring.id, revoked.id].sort());
    assert.deepEqual(rows.get(plain.id), {
      ID: plain.id,
      SCOPES: ALL_SCOPES.join(','),
      CREATED: plain.createdAt,
      'CREATED BY': `cli:${plain.createdBy?.user ?? ''}`,
      'LAST USED': '-',
      EXPIRES: '-',
      REVOKED: '-',
      'REVOKED BY': '-',
      'BANNED UNTIL': '-',
    });
    assert.equal(rows.get(revoked.id)?.['REVOKED BY'], `cli:${plain.createdBy?.user ?? ''}`);
    assert.equal(rows.get(expiring.id)?.EXPIRES, expiring.expiresAt);
    assert.match(rows.get(revoked.id)?.REVOKED ?? '', ISO);

    const listed = new Map((await keysOf(box, 'acme')).map((key) => [key.id, key]));
    assert.deepEqual(listed.get(plain.id), unusedKeyJson(plain, plain.createdBy));
    assert.equal(listed.get(expiring.id)?.expiresAt, expiring.expiresAt);
    const revokedAt = Date.parse(listed.get(revoked.id)?.revokedAt ?? '');
    assert.ok(
      revokedAt >= before - 1000 && revokedAt <= Date.now(),
      `revokedAt is the time of revocation, got ${String(listed.get(revoked.id)?.revokedAt)}`,
    );

    const [shownText, shownJson] = await box.each(
      ['account', 'show', '--name', 'acme'],
      ['account', 'show', '--name', 'acme', '--json'],
    );
    const fields = fieldsOf(shownText as CliResult);
    assert.equal(fields.get('name'), 'acme');
    assert.equal(fields.get('plan'), 'free');
    assert.match(fields.get('created') ?? '', ISO);
    assert.equal(fields.get('per minute'), "60 (the free plan's)");
    assert.equal(fields.get('per day'), "1000 (the free plan's)");
    assert.equal(
      fields.get('keys'),
      '3 (2 active, at most 20)',
      'account show counts the keys; the revoked one is not active',
    );
    assert.match(fields.get('windows') ?? '', /REDIS_URL/, 'without Redis it says why it shows no counts');
    assert.deepEqual(keyTableOf(shownText as CliResult), tableOf(human), 'account show lists the keys as key list');
    const account = jsonOf<AccountShowJson>(shownJson as CliResult);
    assertAccount(account, { name: 'acme', plan: 'free' }, SHOW_FIELDS);
    assert.equal(account.keys, 3);
    assert.equal(account.activeKeys, 2);
    assert.deepEqual(account.keyList, [...listed.values()], 'keyList: the keys as key list --json shows them');
    assert.equal(account.windows, null, 'no invented counts without Redis');
    assert.match(account.windowsNote ?? '', /REDIS_URL/);
  });

  it('key revoke and ban lift of an unknown id exit 1; key list of an unknown account exits 1', async (t) => {
    const box = sandbox(t);
    const results = await box.each(
      ['key', 'revoke', '--id', 'key_doesnotexist', '--json'],
      ['ban', 'lift', '--id', 'key_doesnotexist'],
      ['key', 'list', '--account', 'nobody'],
    );
    assert.equal(assertFails(results[0] as CliResult, 1, /key_doesnotexist/), 'not_found');
    assertFails(results[1] as CliResult, 1, /key_doesnotexist/);
    assertFails(results[2] as CliResult, 1, /nobody/);
  });
});
