import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  assertFails,
  assertOk,
  ISO,
  jsonOf,
  linesOf,
  OPERATOR_TOKEN,
  operatorTokenOf,
  shown,
  tableOf,
  type OperatorTokenJson,
} from '../support/cli-assertions.ts';
import type { CliResult } from '../support/cli-runner.ts';
import { assertRefusals, sandbox } from '../support/cli-sandbox.ts';

/**
 * `petstore operator token create|list|revoke` (docs/operations.md), each test on its own SQLite
 * store; a token at work on the admin API is in test/cli/with-server.test.ts.
 */

function assertOperatorTokenShape(token: OperatorTokenJson): void {
  assert.deepEqual(
    Object.keys(token)
      .filter((field) => field !== 'token')
      .sort(),
    ['createdAt', 'id', 'lastUsedAt', 'name', 'revokedAt'],
    `operator token fields, got ${JSON.stringify(token)}`,
  );
  assert.match(token.id, /^[0-9A-Za-z]{16}$/);
  assert.match(token.createdAt, ISO);
  for (const field of [token.lastUsedAt, token.revokedAt]) if (field !== null) assert.match(field, ISO);
}

describe('petstore operator token commands', { concurrency: true }, () => {
  it('operator token create prints the token alone on its last line; list shows it; revoke marks it', async (t) => {
    const box = sandbox(t);
    const human = await box.cli('operator', 'token', 'create', '--name', 'alice');
    const { token, id } = operatorTokenOf(human);
    assert.match(linesOf(human)[0] ?? '', new RegExp(`^created operator token ${id} \\(alice\\)$`), shown(human));
    assert.match(human.stdout, /shown once/);
    const json = jsonOf<OperatorTokenJson & { token: string }>(await box.cli('operator', 'token', 'create', '--json'));
    assertOperatorTokenShape(json);
    assert.equal(json.name, null);
    assert.equal(OPERATOR_TOKEN.exec(json.token)?.[1], json.id);

    const table = tableOf(await box.cli('operator', 'token', 'list'));
    assert.deepEqual(
      table.map((row) => [row.ID, row.NAME, row['LAST USED'], row.REVOKED]),
      [
        [id, 'alice', '-', '-'],
        [json.id, '-', '-', '-'],
      ],
    );
    assert.ok(table.every((row) => ISO.test(row.CREATED ?? '')));
    const listed = jsonOf<OperatorTokenJson[]>(await box.cli('operator', 'token', 'list', '--json'));
    for (const entry of listed) assertOperatorTokenShape(entry);
    assert.ok(!JSON.stringify(listed).includes(token.slice(-32)), 'a listing never shows a secret');

    const revoked = await box.cli('operator', 'token', 'revoke', '--id', id);
    assertOk(revoked);
    assert.match(revoked.stdout, new RegExp(`^revoked operator token ${id} at \\d{4}-`));
    const again = jsonOf<OperatorTokenJson>(await box.cli('operator', 'token', 'revoke', '--id', json.id, '--json'));
    assertOperatorTokenShape(again);
    assert.match(again.revokedAt ?? '', ISO);
    const after = jsonOf<OperatorTokenJson[]>(await box.cli('operator', 'token', 'list', '--json'));
    assert.ok(after.every((entry) => entry.revokedAt !== null));
  });

  it('operator token commands refuse bad arguments with exit 2 and an unknown id with exit 1', async (t) => {
    const box = sandbox(t);
    await assertRefusals(box, [
      [['operator', 'token', 'revoke'], /--id/],
      [['operator', 'token', 'revoke', '--json'], /--id/, 'invalid_arguments'],
      [['operator', 'token', 'create', '--name'], /--name needs a value/],
      [['operator', 'token', 'list', '--name', 'x'], /does not take --name/],
      [['operator', 'token', 'list', 'extra'], /unexpected argument 'extra'/],
      [['operator', 'tokn', 'list', '--json'], /did you mean operator token list\?/, 'unknown_command'],
      [['operator', 'token', 'delete'], /operator token commands: operator token create/],
      [['operator', '--json'], /'operator' needs a command/, 'no_command'],
      [['operator', 'token', '--json'], /'operator token' needs a command/, 'no_command'],
    ]);
    const bare = await box.cli('operator', 'token');
    assert.equal(bare.status, 2, shown(bare));
    assert.match(bare.stderr, /^usage: petstore operator token <command>/, shown(bare));
    assert.equal(existsSync(box.databasePath), false, 'bad arguments are refused before the store is opened');
    const [unknown, label] = await box.each(
      ['operator', 'token', 'revoke', '--id', 'nope', '--json'],
      ['operator', 'token', 'create', '--name', 'bad\u001bname'],
    );
    assert.equal(assertFails(unknown as CliResult, 1, /nope/), 'not_found');
    assertFails(label as CliResult, 2, /token name/);
  });
});
