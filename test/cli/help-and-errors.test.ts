import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  assertAccount,
  assertFails,
  assertKeyShape,
  assertOk,
  ISO,
  jsonOf,
  KEY,
  shown,
  type CreatedKeyJson,
  type KeyJson,
} from '../support/cli-assertions.ts';
import type { CliResult } from '../support/cli-runner.ts';
import { assertRefusals, sandbox } from '../support/cli-sandbox.ts';

/**
 * What every command shares: the usage (--help, -h, help, or no command), --json wherever it stands,
 * and failures as one line on stderr with exit 1 or 2, what they echo made visible. Each test on its
 * own SQLite store. The wording of refusals and suggestions is in test/cli/usage.test.ts.
 */

describe('petstore help, --json and errors', { concurrency: 4 }, () => {
  it('prints the usage on stdout with exit 0 for --help, -h and help, without touching the store', async (t) => {
    const box = sandbox(t);
    const results = await Promise.all([
      box.cli('--help'),
      box.cli('-h'),
      box.cli('help'),
      box.cli('key', 'create', '--help'),
    ]);
    for (const result of results) {
      assertOk(result);
      assert.match(result.stdout, /^usage: petstore /, shown(result));
      for (const command of [
        'serve',
        'migrate',
        'account create',
        'account set-plan',
        'account list',
        'account show',
        'key create',
        'key list',
        'key revoke',
        'ban lift',
        'operator token create',
        'operator token list',
        'operator token revoke',
      ]) {
        assert.ok(result.stdout.includes(command), `the usage mentions '${command}'\n${shown(result)}`);
      }
    }
    assert.equal(existsSync(box.databasePath), false, 'printing the usage does not create a store');
  });

  it('without a command: the usage on stderr and exit 2; with --json a JSON error', async (t) => {
    const box = sandbox(t);
    const [bare, json] = await Promise.all([box.cli(), box.cli('--json')]);
    assert.equal(bare.status, 2, shown(bare));
    assert.equal(bare.stdout, '', shown(bare));
    assert.match(bare.stderr, /^usage: petstore /, shown(bare));
    assert.ok(bare.stderr.includes('account show'), shown(bare));
    assert.equal(assertFails(json, 2, /command/), 'no_command');
    assert.equal(existsSync(box.databasePath), false, 'a missing command does not create a store');
  });

  it('shows control characters it echoes as visible escapes, never raw on the terminal', async (t) => {
    const box = sandbox(t);
    const [revoke, json, unknown, usage] = await box.each(
      ['key', 'revoke', '--id', 'key_\u001b[31m'],
      ['account', 'show', '--name', 'a\nb\u007f\u009b2J', '--json'],
      ['\u001b]0;title\u0007'],
      ['account', 'create', '--name', 'acme', '--plan', 'free', '--per-minute', '1\r2'],
    );
    // Anything but a line break, printable ASCII and U+00A0 onwards: C0, DEL and C1 controls.
    const raw = /[^\n\x20-\x7e\u00a0-\u{10ffff}]/u;
    for (const result of [revoke, json, unknown, usage] as CliResult[]) {
      assert.doesNotMatch(result.stdout + result.stderr, raw, `nothing raw\n${JSON.stringify(result)}`);
    }
    assertFails(revoke as CliResult, 1, /^petstore: no key with id 'key_\\x1b\[31m'\n$/);
    // --json escapes them as JSON does, DEL and C1 included, and still says exactly what was given.
    assertFails(json as CliResult, 1, /'a\nb\u007f\u009b2J'/);
    assert.ok((json as CliResult).stderr.includes(String.raw`'a\nb\u007f\u009b2J'`), (json as CliResult).stderr);
    assertFails(unknown as CliResult, 2, /^petstore: unknown command '\\x1b\]0;title\\x07'/);
    assertFails(usage as CliResult, 2, /\(got '1\\x0d2'\)/);
  });

  it('refuses unknown commands, unknown flags, missing flags and extra arguments with exit 2', async (t) => {
    const box = sandbox(t);
    await assertRefusals(box, [
      [['bogus'], /bogus/],
      [['bogus', '--json'], /bogus/, 'unknown_command'],
      [['account', 'show', '--json'], /--name/, 'invalid_arguments'],
      [['account', 'list', '--bogus', '--json'], /bogus/, 'invalid_arguments'],
      [['account', 'delete', '--name', 'acme'], /account delete/],
      [['account', 'list', '--bogus'], /bogus/],
      [['migrate', '--plan', 'free'], /--plan/],
      [['key', 'create', '--json'], /--account/],
      [['key', 'revoke'], /--id/],
      [['ban', 'lift'], /--id/],
      [['key', 'create', '--account'], /account/],
      [['account', 'list', 'extra'], /extra/],
      [['migrate', 'now'], /now/],
      [['key', 'create', '--account', 'acme', 'extra'], /extra/],
      // A suggestion is the whole line: it says what to type instead of pointing to --help.
      [['account', 'show', '--nmae', 'acme'], /^petstore: unknown option --nmae; did you mean --name\?\n$/],
      [['acount', 'list', '--json'], /^unknown command 'acount list'; did you mean account list\?$/, 'unknown_command'],
    ]);
    assert.equal(existsSync(box.databasePath), false, 'bad arguments are refused before the store is opened');
  });

  it('bad configuration exits 2 with one line naming the variable', async (t) => {
    const box = sandbox(t);
    const results = await Promise.all([
      box.cliWith({ DATABASE_URL: 'mysql://x' }, 'account', 'list'),
      box.cliWith({ DATABASE_URL: 'mysql://x' }, 'migrate', '--json'),
      box.cliWith({ LOG_LEVEL: 'loud' }, 'account', 'list'),
    ]);
    for (const result of results.slice(0, 2)) assertFails(result as CliResult, 2, /DATABASE_URL/);
    assert.equal(assertFails(results[1] as CliResult, 2), 'invalid_config');
    assertFails(results[2] as CliResult, 2, /LOG_LEVEL/);
    assert.equal(existsSync(box.databasePath), false, 'nothing is created with a bad configuration');
  });

  it('every command prints one line of valid JSON with --json, wherever the flag stands', async (t) => {
    // migrate, account list, key list and ban lift print JSON in the tests of their own; here the rest.
    const box = sandbox(t);
    assertAccount(jsonOf(await box.cli('--json', 'account', 'create', '--name', 'acme', '--plan', 'pro')), {
      name: 'acme',
      plan: 'pro',
    });
    assertAccount(jsonOf(await box.cli('account', '--json', 'set-plan', '--name', 'acme', '--plan', 'business')), {
      name: 'acme',
      plan: 'business',
    });
    const created = jsonOf<CreatedKeyJson>(
      await box.cli('key', 'create', '--account', 'acme', '--expires-in', '12h', '--json'),
    );
    assertKeyShape(created);
    assert.match(created.key, KEY);
    const revoked = jsonOf<KeyJson>(await box.cli('key', 'revoke', '--json', '--id', created.id));
    assertKeyShape(revoked);
    assert.equal(revoked.id, created.id);
    assert.match(revoked.revokedAt ?? '', ISO);
    assertFails(await box.cli('ban', 'lift', '--id', created.id, '--json'), 1, /not banned/);
  });
});
