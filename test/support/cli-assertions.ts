import assert from 'node:assert/strict';
import type { CliResult } from './cli-runner.ts';

/**
 * What the operator CLI prints, read as a shell would read it (README, "API keys" and "CLI").
 * Exit status: 0 done, 1 the operation failed, 2 bad arguments or configuration; every failure is
 * one line on stderr and nothing on stdout: `petstore: …`, or `{"error": {code, message}}` with --json.
 * These check that contract and parse the tables, fields and JSON the commands print.
 */

export const KEY = /^pst_[0-9A-Za-z]{36}$/;
const KEY_ID = /^key_[0-9A-Za-z]+$/;
export const OPERATOR_TOKEN = /^pso_([0-9A-Za-z]{16})_[0-9A-Za-z]{32}$/;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export interface AccountJson {
  readonly name: string;
  readonly plan: string;
  readonly perMinute: number;
  readonly perDay: number;
  readonly keyLimit: number;
  readonly createdAt: string;
}

export interface WindowJson {
  readonly name: string;
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: string;
}

export interface AccountShowJson extends AccountJson {
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

export interface KeyJson {
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
export const ALL_SCOPES = ['pets:read', 'pets:write', 'usage:read'];

export interface CreatedKeyJson extends KeyJson {
  readonly key: string;
}

export interface OperatorTokenJson {
  readonly id: string;
  readonly name: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export function shown(result: CliResult): string {
  const command = `petstore ${result.args.join(' ')} → exit ${String(result.status)}`;
  return `${command}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

export function assertOk(result: CliResult): void {
  assert.equal(result.status, 0, shown(result));
  assert.equal(result.stderr, '', `nothing on stderr when it works\n${shown(result)}`);
}

/**
 * Exit status `status`, nothing on stdout, one line on stderr: starting with `petstore:`, or with
 * --json the object `{"error": {code, message}}`. Returns the JSON error's code ('' without --json).
 */
export function assertFails(result: CliResult, status: 1 | 2, mention?: RegExp): string {
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
export function jsonOf<T>(result: CliResult): T {
  assertOk(result);
  assert.ok(result.stdout.endsWith('\n'), `JSON output ends with a newline\n${shown(result)}`);
  assert.equal(result.stdout.trimEnd().split('\n').length, 1, `--json prints one line\n${shown(result)}`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    throw new Error(`--json must print valid JSON\n${shown(result)}`, { cause: error });
  }
}

export function linesOf(result: CliResult): string[] {
  return result.stdout.trimEnd().split('\n');
}

/** `operator token create` as text: the token alone on its last line, and the token's id within it. */
export function operatorTokenOf(result: CliResult): { token: string; id: string } {
  assertOk(result);
  const token = linesOf(result).at(-1) ?? '';
  const id = OPERATOR_TOKEN.exec(token)?.[1];
  assert.ok(id, `the token alone on the last line\n${shown(result)}`);
  return { token, id };
}

/** The cells of a table row (columns are separated by at least two spaces). */
export function cellsOf(line: string): string[] {
  return line.trim().split(/ {2,}/);
}

/** The rows of a human table as header → cell records. */
export function tableOf(result: CliResult): Record<string, string>[] {
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
export function assertAccount(
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

export const SHOW_FIELDS = [
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
export function fieldsOf(result: CliResult): Map<string, string> {
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
export function keyTableOf(result: CliResult): Record<string, string>[] {
  const [, table] = result.stdout.split('\n\n');
  return table === undefined ? [] : tableOf({ ...result, stdout: table });
}

export function assertKeyShape(key: KeyJson): void {
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

/** The columns of `key list`, and of the table of keys `account show` prints. */
export const KEY_TABLE_COLUMNS = [
  'ID',
  'SCOPES',
  'CREATED',
  'CREATED BY',
  'LAST USED',
  'EXPIRES',
  'REVOKED',
  'REVOKED BY',
  'BANNED UNTIL',
];

/** A key as `key list --json` shows it before any use, expiry, revocation or ban, issued without --scopes. */
export function unusedKeyJson(
  key: { readonly id: string; readonly createdAt: string },
  createdBy: KeyJson['createdBy'],
): KeyJson {
  return {
    id: key.id,
    name: null,
    createdBy,
    revokedBy: null,
    createdAt: key.createdAt,
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    bannedUntil: null,
    scopes: ALL_SCOPES,
  };
}
