import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Output } from '../../src/cli/output.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { buildServices } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { ISO, KEY_TABLE_COLUMNS, unusedKeyJson } from '../support/cli-assertions.ts';

/**
 * The CLI's answers where no process boundary is under test: runCli in this process, printing to
 * a recording Output, over SQLite files of the test's own. What a shell sees (one line on stderr,
 * `petstore: ` before it, exit statuses) is covered by test/cli/help-and-errors.test.ts and the
 * files of each command: the exact text in process, and through real processes where the process
 * boundary matters (test/cli/as-a-process.test.ts).
 */

/** What a command printed: stdout lines, and its failure as runCli handed it to the Output. */
interface Run {
  readonly status: number;
  readonly lines: string[];
  readonly failure: { code: string; message: string; usage: string | undefined } | undefined;
}

async function run(argv: string[], environment: NodeJS.ProcessEnv = {}): Promise<Run> {
  const lines: string[] = [];
  let failure: Run['failure'];
  const out: Output = {
    json: argv.includes('--json'),
    write: (line) => void lines.push(line),
    error: (code, message, usage) => {
      assert.equal(failure, undefined, 'one failure at most');
      failure = { code, message, usage };
    },
  };
  const status = await runCli(argv, out, environment);
  return { status, lines, failure };
}

/**
 * Exit 2 with nothing on stdout; returns the failure, its message as --json reports it. Without
 * --json the same message is printed, followed by "(see --help)" unless it suggests what to type.
 */
async function refused(argv: string[]): Promise<NonNullable<Run['failure']>> {
  const [text, json] = [await run(argv), await run(['--json', ...argv])];
  for (const result of [text, json]) {
    assert.equal(result.status, 2, `petstore ${argv.join(' ')}: ${JSON.stringify(result)}`);
    assert.deepEqual(result.lines, [], 'nothing on stdout');
    assert.ok(result.failure, 'a failure is reported');
    assert.doesNotMatch(result.failure.message, /\n/, 'the message is one line');
  }
  const failure = json.failure as NonNullable<Run['failure']>;
  const pointer = failure.message.includes('did you mean') || failure.usage !== undefined ? '' : ' (see --help)';
  assert.deepEqual(text.failure, { ...failure, message: `${failure.message}${pointer}`, usage: text.failure?.usage });
  return { ...failure, usage: text.failure?.usage };
}

/** Exit 0, one line of stdout, parsed as JSON. */
async function jsonOf(argv: string[], environment?: NodeJS.ProcessEnv): Promise<unknown> {
  const result = await run(argv, environment);
  assert.equal(result.status, 0, JSON.stringify(result));
  assert.equal(result.failure, undefined);
  assert.equal(result.lines.length, 1, 'one line of JSON');
  return JSON.parse(result.lines[0] as string);
}

function storeEnvironment(t: TestContext): NodeJS.ProcessEnv {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-cli-usage-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  return { DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}`, LOG_LEVEL: 'warn' };
}

interface CreatedKey {
  readonly id: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

const GROUPS: Record<string, string[]> = {
  account: ['account create', 'account set-plan', 'account set-key-limit', 'account list', 'account show'],
  key: ['key create', 'key list', 'key revoke'],
  ban: ['ban lift'],
  operator: ['operator token create', 'operator token list', 'operator token revoke'],
};

describe('petstore CLI usage', () => {
  it('suggests the nearest option of the command, in one line with balanced quotes', async () => {
    for (const argv of [
      ['account', 'show', '--nmae', 'acme'],
      ['--nmae', 'acme', 'account', 'show'],
    ]) {
      const failure = await refused(argv);
      assert.equal(failure.code, 'invalid_arguments');
      assert.equal(failure.message, 'unknown option --nmae; did you mean --name?');
    }
    assert.equal(
      (await refused(['key', 'create', '--acount', 'acme'])).message,
      'unknown option --acount; did you mean --account?',
    );
    assert.equal(
      (await refused(['key', 'create', '--account', 'acme', '--expires', '1d'])).message,
      'unknown option --expires; did you mean --expires-in?',
    );
    assert.equal((await refused(['account', 'list', '--jsn'])).message, 'unknown option --jsn; did you mean --json?');
    // Nothing near among the command's own options: no suggestion of one it would refuse.
    assert.equal((await refused(['account', 'list', '--nmae'])).message, 'unknown option --nmae');
    assert.equal((await refused(['account', 'list', '--bogus'])).message, 'unknown option --bogus');
    assert.equal((await refused(['account', 'list', '-x'])).message, 'unknown option -x');
    // An option of another command keeps its message.
    assert.equal((await refused(['account', 'list', '--name', 'acme'])).message, "'account list' does not take --name");
    assert.equal((await refused(['migrate', '--plan', 'free'])).message, "'migrate' does not take --plan");
  });

  it('says in one line what is wrong with a value, as node:util would not', async () => {
    assert.equal((await refused(['account', 'show', '--name'])).message, '--name needs a value');
    assert.equal((await refused(['account', 'list', '--json=yes'])).message, '--json takes no value');
    const forgotten = await refused(['account', 'show', '--name', '--plan']);
    assert.equal(forgotten.message, '--name needs a value (got --plan; write --name=--plan if you mean it)');
    for (const failure of [forgotten, await refused(['account', 'show', '--name'])]) {
      const quotes = failure.message.match(/'/g)?.length ?? 0;
      assert.equal(quotes % 2, 0, `balanced quotes: ${failure.message}`);
    }
  });

  it('suggests the nearest command, word by word, or lists the group', async () => {
    const cases: Array<[argv: string[], message: string]> = [
      [['acount', 'list'], "unknown command 'acount list'; did you mean account list?"],
      [['account', 'lst'], "unknown command 'account lst'; did you mean account list?"],
      [['kye', 'lsit', '--account', 'acme'], "unknown command 'kye lsit'; did you mean key list?"],
      [['ban', 'lfit', '--id', 'key_x'], "unknown command 'ban lfit'; did you mean ban lift?"],
      [['acount'], "unknown command 'acount'; did you mean account?"],
      [['serv'], "unknown command 'serv'; did you mean serve?"],
      [['bogus'], "unknown command 'bogus'"],
      [
        ['account', 'delete', '--name', 'acme'],
        "unknown command 'account delete'; account commands: " +
          'account create, account set-plan, account set-key-limit, account list, account show',
      ],
    ];
    for (const [argv, message] of cases) {
      const failure = await refused(argv);
      assert.equal(failure.code, 'unknown_command', argv.join(' '));
      assert.equal(failure.message, message);
      assert.equal(failure.usage, undefined, 'one line, not the usage');
    }
  });

  it('a group without its command lists its commands', async () => {
    for (const [group, commands] of Object.entries(GROUPS)) {
      {
        const failure = await refused([group]);
        assert.equal(failure.code, 'no_command');
        assert.equal(failure.message, `'${group}' needs a command: ${commands.join(', ')}`);
        // Without --json the group's usage is printed instead of the line.
        const usage = failure.usage ?? '';
        assert.match(usage, new RegExp(`^usage: petstore ${group} <command>`));
        for (const command of commands) assert.match(usage, new RegExp(`^  ${command}\\b`, 'm'), usage);
        const listed = usage.split('\n').filter((line) => /^ {2}[a-z]/.test(line));
        assert.equal(listed.length, commands.length, `only ${group}'s commands: ${usage}`);
      }
    }
  });

  it('--version, -V and version print the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.match(version, /^\d+\.\d+\.\d+/);
    for (const argv of [['--version'], ['-V'], ['version'], ['account', 'list', '--version']]) {
      const result = await run(argv);
      assert.deepEqual(result, { status: 0, lines: [`petstore ${version}`], failure: undefined }, argv.join(' '));
      assert.deepEqual(await jsonOf([...argv, '--json']), { name: 'petstore', version });
    }
    assert.equal((await refused(['version', 'now'])).message, "unexpected argument 'now'");
  });

  it('help --json lists every command with its options, required options and description', async () => {
    const text = await run(['help']);
    assert.equal(text.status, 0);
    const usage = text.lines.join('\n');
    const help = (await jsonOf(['help', '--json'])) as {
      commands: Array<{ name: string; usage: string; options: string[]; required: string[]; description: string }>;
      globalOptions: string[];
    };
    assert.deepEqual(await jsonOf(['--help', '--json']), help);
    assert.deepEqual(await jsonOf(['key', 'create', '-h', '--json']), help);
    assert.deepEqual(
      help.commands.map((command) => command.name),
      ['serve', 'migrate', ...Object.values(GROUPS).flat(), 'help', 'version'],
    );
    const byName = new Map(help.commands.map((command) => [command.name, command]));
    assert.deepEqual(byName.get('account create'), {
      name: 'account create',
      usage: 'account create --name NAME --plan PLAN [--per-minute N --per-day N]',
      options: ['--name', '--plan', '--per-minute', '--per-day'],
      required: ['--name', '--plan'],
      description: byName.get('account create')?.description,
    });
    assert.deepEqual(byName.get('key create')?.required, ['--account']);
    assert.deepEqual(byName.get('account list')?.options, []);
    assert.deepEqual(help.globalOptions, ['--json', '--help', '--version']);
    for (const command of help.commands) {
      for (const required of command.required) assert.ok(command.options.includes(required), command.name);
      assert.ok(command.description.length > 0, command.name);
      // The text and the JSON come from one table.
      assert.ok(usage.includes(`  ${command.usage}`), `the usage shows '${command.usage}'`);
      assert.ok(usage.includes(command.description), `the usage describes '${command.name}'`);
    }
  });

  it('account show lists the keys with creation, last use, expiry, revocation and ban', async (t) => {
    const env = storeEnvironment(t);
    assert.equal((await run(['account', 'create', '--name', 'acme', '--plan', 'free'], env)).status, 0);
    const empty = (await jsonOf(['account', 'show', '--name', 'acme', '--json'], env)) as Record<string, unknown>;
    assert.deepEqual([empty.keys, empty.activeKeys, empty.keyList], [0, 0, []]);
    const created: CreatedKey[] = [];
    for (const argv of [[], ['--expires-in', '30d'], [], []])
      created.push((await jsonOf(['key', 'create', '--account', 'acme', ...argv, '--json'], env)) as CreatedKey);
    const [plain, expiring, revoked, banned] = created as [CreatedKey, CreatedKey, CreatedKey, CreatedKey];
    assert.equal((await run(['key', 'revoke', '--id', revoked.id], env)).status, 0);
    const bannedUntil = Date.now() + 3_600_000;
    const services = await buildServices(loadConfig(env));
    await services.store.bans.ban(banned.id, Date.now(), bannedUntil);
    await services.close();

    const shown = (await jsonOf(['account', 'show', '--name', 'acme', '--json'], env)) as {
      keys: number;
      activeKeys: number;
      keyList: Array<{ id: string; expiresAt: string | null; revokedAt: string | null; bannedUntil: string | null }>;
    };
    assert.equal(shown.keys, 4, 'the count stays a number');
    assert.equal(shown.activeKeys, 3, 'the revoked key is not active');
    const listed = (await jsonOf(['key', 'list', '--account', 'acme', '--json'], env)) as unknown[];
    assert.deepEqual(shown.keyList, listed, 'the keys as key list shows them');
    const keys = new Map(shown.keyList.map((key) => [key.id, key]));
    assert.deepEqual(keys.get(plain.id), unusedKeyJson(plain, { kind: 'cli', user: userInfo().username }));
    assert.equal(keys.get(expiring.id)?.expiresAt, expiring.expiresAt);
    assert.match(keys.get(revoked.id)?.revokedAt ?? '', ISO);
    assert.equal(keys.get(banned.id)?.bannedUntil, new Date(bannedUntil).toISOString());

    const text = await run(['account', 'show', '--name', 'acme'], env);
    assert.equal(text.status, 0);
    const blank = text.lines.indexOf('');
    assert.ok(blank > 0, `a blank line ends the fields: ${text.lines.join('\n')}`);
    assert.ok(text.lines.slice(0, blank).includes('keys:        4 (3 active, at most 20)'), text.lines.join('\n'));
    const [header, ...rows] = text.lines.slice(blank + 1).map((line) => line.split(/ {2,}/));
    assert.deepEqual(header, KEY_TABLE_COLUMNS);
    const byId = new Map(rows.map((cells) => [cells[0], cells]));
    assert.deepEqual([...byId.keys()].sort(), created.map((key) => key.id).sort());
    const everyScope = 'pets:read,pets:write,usage:read';
    const cli = `cli:${userInfo().username}`;
    assert.deepEqual(byId.get(plain.id), [plain.id, everyScope, plain.createdAt, cli, '-', '-', '-', '-', '-']);
    assert.equal(byId.get(expiring.id)?.[5], expiring.expiresAt);
    assert.match(byId.get(revoked.id)?.[6] ?? '', ISO);
    assert.equal(byId.get(revoked.id)?.[7], cli, 'who revoked it');
    assert.equal(byId.get(banned.id)?.[8], new Date(bannedUntil).toISOString());
  });
});
