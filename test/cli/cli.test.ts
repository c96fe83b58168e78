import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/clock.ts';
import { startOperatorListener } from '../support/operator-listener.ts';
import { postgresBackend } from '../support/backends.ts';
import { NPM_CLI, runCliInProcess, runCliLaunched, runCliProcess, type CliResult } from '../support/cli-runner.ts';
import { redisBackend } from '../support/redis-backend.ts';
import { freePort, startServerProcess } from '../support/server-process.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The operator CLI (README, "API keys" and "CLI"), configured by the environment alone, as an
 * operator configures it. Every test works on its own SQLite store in a temporary directory.
 * Exit status: 0 done, 1 the operation failed, 2 bad arguments or configuration; every failure is
 * one line on stderr and nothing on stdout: `petstore: …`, or `{"error": {code, message}}` with --json.
 *
 * Commands run through the CLI's own entry function in this process (support/cli-runner.ts), with
 * the exact stdout and stderr text a process would print and its exit status; a running server is
 * the real app in this process over the same SQLite file. What needs a process boundary (exit codes
 * as the shell sees them, `node src/cli/main.ts` and `npm run petstore` start-up, ending on its own,
 * signals) is in 'as a process' below; a closed pipe in test/cli/closed-pipe.test.ts.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const KEY = /^pst_[0-9A-Za-z]{36}$/;
const KEY_ID = /^key_[0-9A-Za-z]+$/;
const OPERATOR_TOKEN = /^pso_([0-9A-Za-z]{16})_[0-9A-Za-z]{32}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface AccountJson {
  readonly name: string;
  readonly plan: string;
  readonly perMinute: number;
  readonly perDay: number;
  readonly keyLimit: number;
  readonly createdAt: string;
}

interface WindowJson {
  readonly name: string;
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: string;
}

interface AccountShowJson extends AccountJson {
  readonly keys: number;
  readonly activeKeys: number;
  readonly keyList: KeyJson[];
  readonly windows: WindowJson[] | null;
  readonly windowsNote: string | null;
}

/** The plans' limits, as documented: per minute and per day. */
const PLAN_LIMITS: Record<string, { perMinute: number; perDay: number }> = {
  free: { perMinute: 60, perDay: 1000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1000, perDay: 100_000 },
};

interface KeyJson {
  readonly id: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  readonly bannedUntil: string | null;
  readonly scopes: readonly string[];
  readonly name: string | null;
  readonly createdBy: { readonly kind: string; readonly user?: string } | null;
  readonly revokedBy: { readonly kind: string } | null;
}

/** What a key issued without --scopes may do. */
const ALL_SCOPES = ['pets:read', 'pets:write', 'usage:read'];

interface CreatedKeyJson extends KeyJson {
  readonly key: string;
}

interface OperatorTokenJson {
  readonly id: string;
  readonly name: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

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

/** A fresh store in its own temporary directory, and the CLI (in this process) pointed at it. */
interface Sandbox {
  readonly databaseUrl: string;
  readonly databasePath: string;
  cli(...args: string[]): Promise<CliResult>;
  /** The CLI with extra environment variables (they override DATABASE_URL too). */
  cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult>;
  /**
   * Several commands, one after the other. Commands on one store are never run side by side
   * without a server holding it open: concurrent opens of the SQLite file can fail.
   */
  each(...commands: string[][]): Promise<CliResult[]>;
  remove(): void;
}

function createSandbox(): Sandbox {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-cli-'));
  const databasePath = join(directory, 'db');
  const databaseUrl = `sqlite:${databasePath}`;
  return {
    databaseUrl,
    databasePath,
    cli: (...args) => runCliInProcess(args, { DATABASE_URL: databaseUrl }),
    cliWith: (env, ...args) => runCliInProcess(args, { DATABASE_URL: databaseUrl, ...env }),
    async each(...commands) {
      const results: CliResult[] = [];
      for (const args of commands) results.push(await runCliInProcess(args, { DATABASE_URL: databaseUrl }));
      return results;
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** A sandbox removed when the test ends. */
function sandbox(t: TestContext): Sandbox {
  const created = createSandbox();
  t.after(() => created.remove());
  return created;
}

function shown(result: CliResult): string {
  const command = `petstore ${result.args.join(' ')} → exit ${String(result.status)}`;
  return `${command}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

function assertOk(result: CliResult): void {
  assert.equal(result.status, 0, shown(result));
  assert.equal(result.stderr, '', `nothing on stderr when it works\n${shown(result)}`);
}

/**
 * Exit status `status`, nothing on stdout, one line on stderr: starting with `petstore:`, or with
 * --json the object `{"error": {code, message}}`. Returns the JSON error's code ('' without --json).
 */
function assertFails(result: CliResult, status: 1 | 2, mention?: RegExp): string {
  assert.equal(result.status, status, shown(result));
  assert.equal(result.stdout, '', `a failure prints nothing on stdout\n${shown(result)}`);
  if (!result.args.includes('--json')) {
    assert.match(
      result.stderr,
      /^petstore: [^\n]+\n$/,
      `a failure is one line on stderr starting with "petstore:"\n${shown(result)}`,
    );
    if (mention) assert.match(result.stderr, mention, shown(result));
    return '';
  }
  assert.match(result.stderr, /^[^\n]+\n$/, `with --json a failure is one line on stderr\n${shown(result)}`);
  const body = JSON.parse(result.stderr) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error'], shown(result));
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message'], shown(result));
  assert.match(body.error.code, /^[a-z_]+$/, shown(result));
  assert.ok(body.error.message.length > 0, shown(result));
  if (mention) assert.match(body.error.message, mention, shown(result));
  return body.error.code;
}

/** Stdout as exactly one line of valid JSON. */
function jsonOf<T>(result: CliResult): T {
  assertOk(result);
  assert.ok(result.stdout.endsWith('\n'), `JSON output ends with a newline\n${shown(result)}`);
  assert.equal(result.stdout.trimEnd().split('\n').length, 1, `--json prints one line\n${shown(result)}`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    throw new Error(`--json must print valid JSON\n${shown(result)}`, { cause: error });
  }
}

function linesOf(result: CliResult): string[] {
  return result.stdout.trimEnd().split('\n');
}

/** The cells of a table row (columns are separated by at least two spaces). */
function cellsOf(line: string): string[] {
  return line.trim().split(/ {2,}/);
}

/** The rows of a human table as header → cell records. */
function tableOf(result: CliResult): Record<string, string>[] {
  assertOk(result);
  const [header, ...rows] = linesOf(result);
  assert.ok(header !== undefined, shown(result));
  const titles = cellsOf(header);
  return rows.map((row) => {
    const cells = cellsOf(row);
    assert.equal(
      cells.length,
      titles.length,
      `each row has a cell per column: ${JSON.stringify(row)}\n${shown(result)}`,
    );
    return Object.fromEntries(titles.map((title, column) => [title, cells[column] ?? '']));
  });
}

/** The account's fields, with its effective limits: the plan's unless given (enterprise). */
function assertAccount(
  account: AccountJson,
  expected: { name: string; plan: string; perMinute?: number; perDay?: number },
  fields = ['createdAt', 'keyLimit', 'name', 'perDay', 'perMinute', 'plan'],
): void {
  assert.deepEqual(Object.keys(account).sort(), fields);
  assert.equal(account.keyLimit, 20, 'the default limit of active keys');
  assert.equal(account.name, expected.name);
  assert.equal(account.plan, expected.plan);
  assert.equal(account.perMinute, expected.perMinute ?? PLAN_LIMITS[expected.plan]?.perMinute);
  assert.equal(account.perDay, expected.perDay ?? PLAN_LIMITS[expected.plan]?.perDay);
  assert.match(account.createdAt, ISO);
}

const SHOW_FIELDS = [
  'activeKeys',
  'createdAt',
  'keyLimit',
  'keyList',
  'keys',
  'name',
  'perDay',
  'perMinute',
  'plan',
  'windows',
  'windowsNote',
];

/** `account show` as text: `label: value` lines, up to the blank line before the table of keys. */
function fieldsOf(result: CliResult): Map<string, string> {
  assertOk(result);
  const [fields = ''] = result.stdout.split('\n\n');
  return new Map(
    fields
      .trimEnd()
      .split('\n')
      .map((line) => {
        const match = /^([a-z ]+):\s+(.*)$/.exec(line);
        assert.ok(match, `a "label: value" line: ${JSON.stringify(line)}\n${shown(result)}`);
        return [match[1] as string, match[2] as string];
      }),
  );
}

/** `account show` as text: the table of keys after the fields, as header → cell records. */
function keyTableOf(result: CliResult): Record<string, string>[] {
  const [, table] = result.stdout.split('\n\n');
  return table === undefined ? [] : tableOf({ ...result, stdout: table });
}

function assertKeyShape(key: KeyJson): void {
  assert.deepEqual(
    Object.keys(key)
      .filter((field) => field !== 'key')
      .sort(),
    [
      'bannedUntil',
      'createdAt',
      'createdBy',
      'expiresAt',
      'id',
      'lastUsedAt',
      'name',
      'revokedAt',
      'revokedBy',
      'scopes',
    ],
    `key fields, got ${JSON.stringify(key)}`,
  );
  assert.match(key.id, KEY_ID);
  assert.match(key.createdAt, ISO);
  assert.equal(key.createdBy?.kind, 'cli', 'every key of these tests is created by the CLI');
  assert.equal(key.revokedBy === null, key.revokedAt === null, 'a revoked key names who revoked it');
  for (const field of [key.lastUsedAt, key.expiresAt, key.revokedAt, key.bannedUntil])
    if (field !== null) assert.match(field, ISO);
}

/** Creates an account on `plan` and a key for it; returns the key and its id. */
async function accountWithKey(
  box: Sandbox,
  name: string,
  planArgs: string[] = ['--plan', 'free'],
): Promise<{ key: string; id: string }> {
  assertOk(await box.cli('account', 'create', '--name', name, ...planArgs));
  const created = jsonOf<CreatedKeyJson>(await box.cli('key', 'create', '--account', name, '--json'));
  assert.match(created.key, KEY);
  return { key: created.key, id: created.id };
}

/** A GET /v1/pets to a server: the app in this process, or a server process. */
async function getPets(
  server: { readonly url: string },
  key: string,
): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function keysOf(box: Sandbox, account: string): Promise<KeyJson[]> {
  const keys = jsonOf<KeyJson[]>(await box.cli('key', 'list', '--account', account, '--json'));
  assert.ok(Array.isArray(keys));
  for (const key of keys) assertKeyShape(key);
  return keys;
}

async function keyOf(box: Sandbox, account: string, id: string): Promise<KeyJson> {
  const key = (await keysOf(box, account)).find((candidate) => candidate.id === id);
  assert.ok(key, `key ${id} is listed for ${account}`);
  return key;
}

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

const [redis, postgres] = await Promise.all([redisBackend(), postgresBackend()]);

// Independent groups run side by side: the server and process groups mostly wait, the command group computes.
describe('petstore CLI', { concurrency: true }, () => {
  after(() => Promise.all([redis.cleanup(), postgres.cleanup()]));

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
        assertOk(created);
        const token = linesOf(created).at(-1) ?? '';
        const id = OPERATOR_TOKEN.exec(token)?.[1];
        assert.ok(id, `the token alone on the last line\n${shown(created)}`);
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

  describe('commands on their own store', { concurrency: 4 }, () => {
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
      assert.deepEqual(
        jsonOf(await first.cli('migrate', '--json')),
        { applied: 0 },
        'a second migrate applies nothing',
      );
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
      const big = jsonOf<AccountJson>(
        await box.cli(
          'account',
          'create',
          '--name',
          'big',
          '--plan',
          'enterprise',
          '--per-minute',
          '5000',
          '--per-day',
          '2000000',
          '--json',
        ),
      );
      assertAccount(big, { name: 'big', plan: 'enterprise', perMinute: 5000, perDay: 2_000_000 });
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
      assertAccount(shownJson, { name: 'big', plan: 'enterprise', perMinute: 5000, perDay: 2_000_000 }, SHOW_FIELDS);
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
      assertOk(
        await box.cli(
          'account',
          'create',
          '--name',
          'big',
          '--plan',
          'enterprise',
          '--per-minute',
          '5000',
          '--per-day',
          '2000000',
        ),
      );
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
      assertAccount(byName.get('big') as AccountJson, {
        name: 'big',
        plan: 'enterprise',
        perMinute: 5000,
        perDay: 2_000_000,
      });
    });

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
      assert.deepEqual(cellsOf(linesOf(human)[0] ?? ''), [
        'ID',
        'SCOPES',
        'CREATED',
        'CREATED BY',
        'LAST USED',
        'EXPIRES',
        'REVOKED',
        'REVOKED BY',
        'BANNED UNTIL',
      ]);
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
      assert.deepEqual(listed.get(plain.id), {
        id: plain.id,
        name: null,
        createdBy: plain.createdBy,
        revokedBy: null,
        createdAt: plain.createdAt,
        lastUsedAt: null,
        expiresAt: null,
        revokedAt: null,
        bannedUntil: null,
        scopes: ALL_SCOPES,
      });
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
      const cases: Array<[args: string[], mention: RegExp, code?: string]> = [
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
        [
          ['acount', 'list', '--json'],
          /^unknown command 'acount list'; did you mean account list\?$/,
          'unknown_command',
        ],
      ];
      const results = await Promise.all(cases.map(([args]) => box.cli(...args)));
      results.forEach((result, index) => {
        const [, mention, code] = cases[index] as (typeof cases)[number];
        const reported = assertFails(result, 2, mention);
        if (code !== undefined) assert.equal(reported, code, shown(result));
      });
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

    it('operator token create prints the token alone on its last line; list shows it; revoke marks it', async (t) => {
      const box = sandbox(t);
      const human = await box.cli('operator', 'token', 'create', '--name', 'alice');
      assertOk(human);
      const lines = linesOf(human);
      const token = lines.at(-1) ?? '';
      const id = OPERATOR_TOKEN.exec(token)?.[1];
      assert.ok(id, shown(human));
      assert.match(lines[0] ?? '', new RegExp(`^created operator token ${id} \\(alice\\)$`), shown(human));
      assert.match(human.stdout, /shown once/);
      const json = jsonOf<OperatorTokenJson & { token: string }>(
        await box.cli('operator', 'token', 'create', '--json'),
      );
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
      const cases: Array<[args: string[], mention: RegExp, code?: string]> = [
        [['operator', 'token', 'revoke'], /--id/],
        [['operator', 'token', 'revoke', '--json'], /--id/, 'invalid_arguments'],
        [['operator', 'token', 'create', '--name'], /--name needs a value/],
        [['operator', 'token', 'list', '--name', 'x'], /does not take --name/],
        [['operator', 'token', 'list', 'extra'], /unexpected argument 'extra'/],
        [['operator', 'tokn', 'list', '--json'], /did you mean operator token list\?/, 'unknown_command'],
        [['operator', 'token', 'delete'], /operator token commands: operator token create/],
        [['operator', '--json'], /'operator' needs a command/, 'no_command'],
        [['operator', 'token', '--json'], /'operator token' needs a command/, 'no_command'],
      ];
      const results = await Promise.all(cases.map(([args]) => box.cli(...args)));
      results.forEach((result, index) => {
        const [, mention, code] = cases[index] as (typeof cases)[number];
        const reported = assertFails(result, 2, mention);
        if (code !== undefined) assert.equal(reported, code, shown(result));
      });
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

    it('every command prints one line of valid JSON with --json, wherever the flag stands', async (t) => {
      // migrate, account list, key list and ban lift print JSON in the tests above; here the rest.
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

  describe('as a process', { concurrency: true }, () => {
    it('exit statuses, stdout and stderr as a shell sees them', async (t) => {
      const box = sandbox(t);
      const run = (...args: string[]): Promise<CliResult> => runCliProcess(args, { DATABASE_URL: box.databaseUrl });
      // The commands that never open the store run beside those that do, which run one after the other.
      const [onStore, unknown, bare, badConfig] = await Promise.all([
        (async () => [
          await run('account', 'create', '--name', 'acme', '--plan', 'pro'),
          await run('account', 'create', '--name', 'acme', '--plan', 'free', '--json'),
          await run('account', 'show', '--name', 'nobody'),
        ])(),
        run('acount', 'list'),
        run(),
        runCliProcess(['account', 'list', '--json'], { DATABASE_URL: 'mysql://x' }),
      ]);
      const [created, taken, missing] = onStore as [CliResult, CliResult, CliResult];
      const [row] = tableOf(created);
      assert.equal(row?.NAME, 'acme', shown(created));
      assert.equal(assertFails(taken, 1, /acme/), 'conflict');
      assertFails(missing, 1, /nobody/);
      assertFails(unknown, 2, /^petstore: unknown command 'acount list'; did you mean account list\?\n$/);
      assert.equal(bare.status, 2, shown(bare));
      assert.equal(bare.stdout, '', shown(bare));
      assert.match(bare.stderr, /^usage: petstore /, shown(bare));
      assert.equal(assertFails(badConfig, 2, /DATABASE_URL/), 'invalid_config');
    });

    it('npm run -s petstore -- … prints only what the CLI prints, and ends with its exit status', async (t) => {
      const box = sandbox(t);
      const env = { DATABASE_URL: box.databaseUrl };
      const [version, missing] = await Promise.all([
        runCliLaunched(NPM_CLI, ['--version'], env),
        runCliLaunched(NPM_CLI, ['account', 'show', '--name', 'nobody'], env),
      ]);
      assertOk(version);
      assert.match(version.stdout, /^petstore \d+\.\d+\.\d+\S*\n$/, shown(version));
      assertFails(missing, 1, /nobody/);
    });

    it(
      'ends on its own over PostgreSQL and Redis: a command closes every connection it opens',
      { skip: postgres.skip ?? redis.skip },
      async () => {
        const env = { DATABASE_URL: postgres.databaseUrl, REDIS_URL: redis.url, REDIS_PREFIX: redis.keyPrefix() };
        // A connection left open would keep the process alive until runCliProcess kills it and fails.
        assertOk(await runCliProcess(['account', 'create', '--name', 'acme', '--plan', 'free'], env));
        const account = jsonOf<AccountShowJson>(
          await runCliProcess(['account', 'show', '--name', 'acme', '--json'], env),
        );
        assert.deepEqual(
          account.windows?.map((window) => window.remaining),
          [60, 1000],
          'the windows, read from Redis',
        );
      },
    );

    it('key list shows the last use flushed by SIGTERM', async (t) => {
      const box = sandbox(t);
      const { key, id } = await accountWithKey(box, 'acme');
      const server = await startServerProcess({ DATABASE_URL: box.databaseUrl });
      t.after(() => server.kill('SIGKILL'));
      const sent = Date.now();
      assert.equal((await getPets(server, key)).status, 200);
      await server.kill('SIGTERM');
      const usedAt = (await keyOf(box, 'acme', id)).lastUsedAt;
      assert.ok(usedAt !== null, 'shutdown flushes the last-used times');
      assert.ok(
        Date.parse(usedAt) >= sent - 5 && Date.parse(usedAt) <= Date.now(),
        `lastUsedAt is the time of the request, got ${usedAt}`,
      );
    });

    it('runs the server, which stops with exit 0 on SIGTERM', async (t) => {
      const box = sandbox(t);
      const port = await freePort();
      const child = spawn(process.execPath, ['src/cli/main.ts', 'serve'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: box.databaseUrl,
          PORT: String(port),
          DEMO_BOOTSTRAP: 'false',
          METRICS_PORT: '0',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      // About 2 s alone; far longer when the whole suite shares two cores.
      const deadline = Date.now() + 45_000;
      let healthy = false;
      while (!healthy && Date.now() < deadline && child.exitCode === null) {
        healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        if (!healthy) await sleep(50);
      }
      assert.ok(healthy, `petstore serve answers /healthz (stdout: ${stdout})`);
      const { key } = await accountWithKey(box, 'acme');
      const response = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(response.status, 200);
      await response.text();
      child.kill('SIGTERM');
      assert.equal(await exited, 0, `exit code after SIGTERM (stdout: ${stdout})`);
    });
  });
});
