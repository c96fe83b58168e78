import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { KEY_SCOPES, SCOPE_MEANINGS } from '../../src/domain/scopes.ts';
import { backends } from '../support/backends.ts';
import { runCliInProcess, type CliResult } from '../support/cli-runner.ts';
import { request } from '../support/http-client.ts';
import { startTestApp } from '../support/test-app.ts';

/**
 * `petstore key create --scopes` (docs/operations.md, "Key scopes") on each storage backend: the
 * key holds the scopes named, `key list` and `account show` show them in text and JSON, and an
 * empty, unknown or repeated scope is refused with exit 2 and one line that names the valid scopes. The
 * CLI's other behaviour is in the other files of test/cli/.
 */

const VALID = 'valid scopes are pets:read, pets:write, usage:read, keys:manage';

interface KeyJson {
  readonly id: string;
  readonly scopes: readonly string[];
}

function shown(result: CliResult): string {
  return `petstore ${result.args.join(' ')} → exit ${String(result.status)}\n${result.stdout}${result.stderr}`;
}

function ok(result: CliResult): string[] {
  assert.equal(result.status, 0, shown(result));
  assert.equal(result.stderr, '', shown(result));
  return result.stdout.trimEnd().split('\n');
}

function jsonOf<T>(result: CliResult): T {
  const lines = ok(result);
  assert.equal(lines.length, 1, shown(result));
  return JSON.parse(lines[0] as string) as T;
}

/** The rows of a table (columns are at least two spaces apart) as header → cell records. */
function tableOf(lines: readonly string[]): Record<string, string>[] {
  const [header = '', ...rows] = lines;
  const cells = (line: string) => line.trim().split(/ {2,}/);
  return rows.map((row) => Object.fromEntries(cells(header).map((title, at) => [title, cells(row)[at] ?? ''])));
}

describe('petstore key create --help', () => {
  it('documents --scopes, every scope with what it allows, and that they never change in --help', async () => {
    const help = ok(await runCliInProcess(['key', 'create', '--help'], {})).join('\n');
    assert.match(help, /key create --account NAME \[--expires-in DURATION\] \[--scopes SCOPES\]/);
    for (const scope of KEY_SCOPES) {
      assert.match(help, new RegExp(`^ {2}${scope} +${SCOPE_MEANINGS[scope]}$`, 'm'), scope);
    }
    assert.match(
      help.replace(/\s+/g, ' '),
      /without --scopes a key holds every scope but keys:manage, those of later releases included/,
    );
    assert.match(help.replace(/\s+/g, ' '), /never change: to change them, create a new key and revoke the old one/);
    const json = jsonOf<{ commands: Array<{ name: string; options: string[] }> }>(
      await runCliInProcess(['help', '--json'], {}),
    );
    const create = json.commands.find((command) => command.name === 'key create');
    assert.deepEqual(create?.options, ['--account', '--expires-in', '--scopes']);
  });
});

for (const backend of await backends()) {
  describe(`petstore key create --scopes (${backend.label})`, { skip: backend.skip }, () => {
    after(() => backend.cleanup());

    /** The CLI over a fresh, empty store of this backend, with an account `acme` on it. */
    async function storeWithAccount(): Promise<{
      databaseUrl: string;
      cli: (...args: string[]) => Promise<CliResult>;
    }> {
      const databaseUrl = await backend.freshDatabaseUrl();
      const cli = (...args: string[]) => runCliInProcess(args, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
      ok(await cli('account', 'create', '--name', 'acme', '--plan', 'free'));
      return { databaseUrl, cli };
    }

    it('issues a key with the scopes named; key list and account show show them in text and JSON', async () => {
      const { databaseUrl, cli } = await storeWithAccount();
      const text = ok(await cli('key', 'create', '--account', 'acme', '--scopes', 'usage:read , pets:read'));
      assert.match(text[0] ?? '', /^created key key_\w+ with scopes pets:read,usage:read$/);
      const reader = text.at(-1) ?? '';
      const readerId = /key_\w+/.exec(text[0] ?? '')?.[0] ?? '';
      const writer = jsonOf<KeyJson & { key: string }>(
        await cli('key', 'create', '--account', 'acme', '--scopes=pets:write', '--json'),
      );
      assert.deepEqual(writer.scopes, ['pets:write']);
      const every = jsonOf<KeyJson>(await cli('key', 'create', '--account', 'acme', '--json'));
      assert.deepEqual(every.scopes, ['pets:read', 'pets:write', 'usage:read'], 'every scope when none is named');

      const expected = new Map([
        [readerId, ['pets:read', 'usage:read']],
        [writer.id, ['pets:write']],
        [every.id, ['pets:read', 'pets:write', 'usage:read']],
      ]);
      const listed = jsonOf<KeyJson[]>(await cli('key', 'list', '--account', 'acme', '--json'));
      assert.deepEqual(new Map(listed.map((key) => [key.id, key.scopes])), expected);
      const shownJson = jsonOf<{ keyList: KeyJson[] }>(await cli('account', 'show', '--name', 'acme', '--json'));
      assert.deepEqual(new Map(shownJson.keyList.map((key) => [key.id, key.scopes])), expected);

      const columns = (rows: Record<string, string>[]) => new Map(rows.map((row) => [row.ID, row.SCOPES]));
      const asTyped = new Map([...expected].map(([id, scopes]) => [id, scopes.join(',')]));
      assert.deepEqual(columns(tableOf(ok(await cli('key', 'list', '--account', 'acme')))), asTyped);
      const [, keyTable = ''] = ok(await cli('account', 'show', '--name', 'acme'))
        .join('\n')
        .split('\n\n');
      assert.deepEqual(columns(tableOf(keyTable.split('\n'))), asTyped);

      // A server on the same store holds each key to its scopes.
      const server = await startTestApp({ env: { DATABASE_URL: databaseUrl }, clock: systemClock });
      try {
        const pet = { name: 'Scoped', categoryId: 1, status: 'available' };
        assert.equal((await request(server, '/v1/pets', { key: reader })).status, 200);
        const refused = await request(server, '/v1/pets', { method: 'POST', key: reader, json: pet });
        assert.equal(refused.status, 403, refused.text);
        assert.equal((await request(server, '/v1/pets', { method: 'POST', key: writer.key, json: pet })).status, 201);
      } finally {
        await server.close();
      }
    });

    it('refuses an empty, unknown or repeated scope with exit 2 and one line naming the valid scopes', async () => {
      const { cli } = await storeWithAccount();
      const refusals: Array<[scopes: string, message: string]> = [
        ['pets:reed', `unknown scope 'pets:reed'; ${VALID}`],
        ['pets:read,Usage:Read,admin', `unknown scopes 'Usage:Read', 'admin'; ${VALID}`],
        ['pets:read,,usage:read', `a scope is empty; ${VALID}`],
        ['pets:read,', `a scope is empty; ${VALID}`],
        // The admin API refuses a repeated scope too: both take the same lists.
        ['pets:read,usage:read,pets:read', `the scope 'pets:read' is repeated: name each once; ${VALID}`],
        [
          '',
          '--scopes needs a value: one or more of pets:read, pets:write, usage:read, keys:manage, separated by commas',
        ],
      ];
      for (const [scopes, message] of refusals) {
        const text = await cli('key', 'create', '--account', 'acme', `--scopes=${scopes}`);
        assert.equal(text.status, 2, shown(text));
        assert.equal(text.stdout, '', shown(text));
        assert.match(text.stderr, /^petstore: [^\n]+\n$/, shown(text));
        assert.ok(text.stderr.startsWith(`petstore: ${message}`), shown(text));
        const json = await cli('key', 'create', '--account', 'acme', `--scopes=${scopes}`, '--json');
        assert.equal(json.status, 2, shown(json));
        assert.deepEqual(JSON.parse(json.stderr), { error: { code: 'invalid_arguments', message } });
      }
      const missing = await cli('key', 'create', '--account', 'acme', '--scopes');
      assert.equal(missing.status, 2, shown(missing));
      assert.match(missing.stderr, /--scopes needs a value: one or more of pets:read, pets:write, usage:read/);
      assert.deepEqual(jsonOf<KeyJson[]>(await cli('key', 'list', '--account', 'acme', '--json')), [], 'no key made');
    });
  });
}
