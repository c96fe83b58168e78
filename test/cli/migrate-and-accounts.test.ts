import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describe, it } from 'node:test';
import {
  assertAccount,
  assertFails,
  assertOk,
  cellsOf,
  fieldsOf,
  ISO,
  jsonOf,
  keyTableOf,
  linesOf,
  SHOW_FIELDS,
  shown,
  tableOf,
  type AccountJson,
  type AccountShowJson,
} from '../support/cli-assertions.ts';
import type { CliResult } from '../support/cli-runner.ts';
import { sandbox } from '../support/cli-sandbox.ts';

/**
 * `petstore migrate` and the account commands (README, "CLI"), each test on its own SQLite store;
 * every command closes the store it opened.
 */

/** An enterprise account with limits of its own, and the command line that creates it. */
const BIG = { name: 'big', plan: 'enterprise', perMinute: 5000, perDay: 2_000_000 };
const CREATE_BIG = 'account create --name big --plan enterprise --per-minute 5000 --per-day 2000000'.split(' ');

describe('petstore migrate and account commands', { concurrency: 4 }, () => {
  it('closes the store it opened before it returns, whether the command works or fails', async (t) => {
    // SQLite removes the store's -wal and -shm files when the last connection to it closes.
    const box = sandbox(t);
    const commands = [
      ['migrate'],
      ['account', 'create', '--name', 'acme', '--plan', 'free'],
      ['account', 'set-plan', '--name', 'acme', '--plan', 'pro'],
      ['account', 'list'],
      ['account', 'show', '--name', 'acme'],
      ['key', 'create', '--account', 'acme'],
      ['key', 'list', '--account', 'acme'],
      ['account', 'create', '--name', 'acme', '--plan', 'free'],
      ['ban', 'lift', '--id', 'key_doesnotexist'],
    ];
    for (const args of commands) {
      const result = await box.cli(...args);
      assert.ok(result.status === 0 || result.status === 1, shown(result));
      assert.deepEqual(readdirSync(dirname(box.databasePath)), [basename(box.databasePath)], shown(result));
    }
  });

  it('migrate applies every migration to a fresh store, then none; --json prints {applied}', async (t) => {
    const [first, second] = [sandbox(t), sandbox(t)];
    const human = await first.cli('migrate');
    assertOk(human);
    const match = /^applied (\d+) migration\(s\)/.exec(human.stdout);
    assert.ok(match, shown(human));
    const applied = Number(match[1]);
    assert.ok(applied >= 2, `a fresh store gets every migration (at least 2), got ${applied}`);
    assert.ok(existsSync(first.databasePath), 'migrate creates the SQLite file');
    assert.deepEqual(jsonOf(await first.cli('migrate', '--json')), { applied: 0 }, 'a second migrate applies nothing');
    assert.deepEqual(
      jsonOf(await second.cli('migrate', '--json')),
      { applied },
      '--json reports the same count on a fresh store',
    );
  });

  it('account create makes free, pro and business accounts', async (t) => {
    const box = sandbox(t);
    const human = await box.cli('account', 'create', '--name', 'acme', '--plan', 'pro');
    const [row] = tableOf(human);
    assert.deepEqual(
      { ...row, CREATED: '' },
      { NAME: 'acme', PLAN: 'pro', 'PER-MINUTE': '300', 'PER-DAY': '10000', CREATED: '' },
    );
    assert.match(row?.CREATED ?? '', ISO);
    const created = (
      await box.each(
        ...['free', 'business'].map((plan) => [
          'account',
          'create',
          '--name',
          `team.${plan}_1`,
          '--plan',
          plan,
          '--json',
        ]),
      )
    ).map((result) => jsonOf<AccountJson>(result));
    assertAccount(created[0] as AccountJson, { name: 'team.free_1', plan: 'free' });
    assertAccount(created[1] as AccountJson, { name: 'team.business_1', plan: 'business' });
    const listed = jsonOf<AccountJson[]>(await box.cli('account', 'list', '--json'));
    assert.deepEqual(listed.map((account) => `${account.name}:${account.plan}`).sort(), [
      'acme:pro',
      'team.business_1:business',
      'team.free_1:free',
    ]);
  });

  it('account create --plan enterprise takes --per-minute and --per-day, and needs both', async (t) => {
    const box = sandbox(t);
    const big = jsonOf<AccountJson>(await box.cli(...CREATE_BIG, '--json'));
    assertAccount(big, BIG);
    const [onlyMinute, neither, text, json] = await box.each(
      ['account', 'create', '--name', 'e1', '--plan', 'enterprise', '--per-minute', '100'],
      ['account', 'create', '--name', 'e2', '--plan', 'enterprise', '--json'],
      ['account', 'show', '--name', 'big'],
      ['account', 'show', '--name', 'big', '--json'],
    );
    for (const result of [onlyMinute, neither])
      assertFails(result as CliResult, 2, /per-minute.*per-day|per-day.*per-minute/);
    const shownText = fieldsOf(text as CliResult);
    assert.equal(shownText.get('plan'), 'enterprise');
    assert.equal(shownText.get('per minute'), "5000 (the account's own)");
    assert.equal(shownText.get('per day'), "2000000 (the account's own)");
    assert.equal(shownText.get('keys'), '0 (0 active, at most 20)');
    assert.deepEqual(keyTableOf(text as CliResult), [], 'no table without keys');
    const shownJson = jsonOf<AccountShowJson>(json as CliResult);
    assert.deepEqual(shownJson.keyList, []);
    assertAccount(shownJson, BIG, SHOW_FIELDS);
    assert.equal(shownJson.keys, 0);
    assert.equal(shownJson.activeKeys, 0);
  });

  it('account create refuses bad arguments with exit 2 and one line, and creates nothing', async (t) => {
    const box = sandbox(t);
    const cases: Array<[args: string[], mention: RegExp]> = [
      [['--name', 'x1', '--plan', 'free', '--per-minute', '100'], /enterprise/],
      [['--name', 'x2', '--plan', 'business', '--per-day', '1000', '--json'], /enterprise/],
      [['--name', 'x3', '--plan', 'gold'], /plan/],
      [['--name', 'x4', '--plan', 'enterprise', '--per-minute', '0', '--per-day', '10'], /per-minute/],
      [['--name', 'x5', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '1.5'], /per-day/],
      [['--name', 'bad name', '--plan', 'free'], /name/],
      [['--name', '.hidden', '--plan', 'free'], /name/],
      [['--name', 'x'.repeat(65), '--plan', 'free', '--json'], /name/],
    ];
    const results = await box.each(...cases.map(([args]) => ['account', 'create', ...args]));
    results.forEach((result, index) => assertFails(result, 2, cases[index]?.[1]));
    assert.equal(assertFails(results[1] as CliResult, 2), 'invalid_arguments', 'the code of bad arguments');
    assert.deepEqual(jsonOf(await box.cli('account', 'list', '--json')), []);
  });

  it('account create refuses a taken name with exit 1', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'free'));
    assertFails(await box.cli('account', 'create', '--name', 'acme', '--plan', 'pro'), 1, /acme/);
    const taken = await box.cli('account', 'create', '--name', 'acme', '--plan', 'pro', '--json');
    assert.equal(assertFails(taken, 1, /acme/), 'conflict');
    const listed = jsonOf<AccountJson[]>(await box.cli('account', 'list', '--json'));
    assert.equal(listed.length, 1);
    assertAccount(listed[0] as AccountJson, { name: 'acme', plan: 'free' });
  });

  it('account set-plan changes the plan; an unknown account exits 1; a bad plan exits 2', async (t) => {
    const box = sandbox(t);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'pro'));
    const [row] = tableOf(await box.cli('account', 'set-plan', '--name', 'acme', '--plan', 'business'));
    assert.equal(row?.NAME, 'acme');
    assert.equal(row?.PLAN, 'business');
    assertAccount(
      jsonOf(
        await box.cli(
          'account',
          'set-plan',
          '--name',
          'acme',
          '--plan',
          'enterprise',
          '--per-minute',
          '7',
          '--per-day',
          '70',
          '--json',
        ),
      ),
      {
        name: 'acme',
        plan: 'enterprise',
        perMinute: 7,
        perDay: 70,
      },
    );
    const [unknown, badPlan] = await box.each(
      ['account', 'set-plan', '--name', 'nobody', '--plan', 'pro'],
      ['account', 'set-plan', '--name', 'acme', '--plan', 'platinum', '--json'],
    );
    assertFails(unknown as CliResult, 1, /nobody/);
    assertFails(badPlan as CliResult, 2, /plan/);
    assertAccount(jsonOf(await box.cli('account', 'set-plan', '--name', 'acme', '--plan', 'free', '--json')), {
      name: 'acme',
      plan: 'free',
    });
    const listed = jsonOf<AccountJson[]>(await box.cli('account', 'list', '--json'));
    assert.equal(listed.length, 1);
    assertAccount(listed[0] as AccountJson, { name: 'acme', plan: 'free' });
  });

  it('account list prints a table, and --json an array', async (t) => {
    const box = sandbox(t);
    const empty = await box.cli('account', 'list');
    assert.deepEqual(tableOf(empty), []);
    assert.deepEqual(cellsOf(linesOf(empty)[0] ?? ''), ['NAME', 'PLAN', 'PER-MINUTE', 'PER-DAY', 'CREATED']);
    assert.deepEqual(jsonOf(await box.cli('account', 'list', '--json')), []);
    assertOk(await box.cli('account', 'create', '--name', 'acme', '--plan', 'pro'));
    assertOk(await box.cli(...CREATE_BIG));
    const [human, json] = await box.each(['account', 'list'], ['account', 'list', '--json']);
    const rows = tableOf(human as CliResult).map((row): Record<string, string> => ({
      ...row,
      CREATED: ISO.test(row.CREATED ?? '') ? 'iso' : (row.CREATED ?? ''),
    }));
    assert.deepEqual(
      rows.sort((a, b) => (a.NAME ?? '').localeCompare(b.NAME ?? '')),
      [
        { NAME: 'acme', PLAN: 'pro', 'PER-MINUTE': '300', 'PER-DAY': '10000', CREATED: 'iso' },
        { NAME: 'big', PLAN: 'enterprise', 'PER-MINUTE': '5000', 'PER-DAY': '2000000', CREATED: 'iso' },
      ],
    );
    const accounts = jsonOf<AccountJson[]>(json as CliResult);
    assert.ok(Array.isArray(accounts));
    const byName = new Map(accounts.map((account) => [account.name, account]));
    assert.equal(accounts.length, 2);
    assertAccount(byName.get('acme') as AccountJson, { name: 'acme', plan: 'pro' });
    assertAccount(byName.get('big') as AccountJson, BIG);
  });
});
