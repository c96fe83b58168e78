import type { DestinationStream } from 'pino';
import type { AccountSummary, CreatedKey } from '../auth/account-service.ts';
import { operatorTokenView, type CreatedOperatorToken } from '../auth/operator-tokens.ts';
import type { AccountQuotas } from '../ratelimit/account-quotas.ts';
import type { AccountRecord } from '../domain/accounts.ts';
import type { ApiKeyRecord, KeyActor } from '../domain/keys.ts';
import type { OperatorTokenRecord } from '../domain/operator-tokens.ts';
import type { AccountWindows } from './account-windows.ts';

/** Where a command prints: results on stdout, failures on stderr; `json` picks the format of both. */
export interface Output {
  readonly json: boolean;
  write(line: string): void;
  /**
   * A failure on stderr: `{"error": {code, message}}` with --json; otherwise `usage` when given
   * (the choices after a missing command), else the line `petstore: message`.
   */
  error(code: string, message: string, usage?: string): void;
  /** Where log lines go (a Redis warning…): the process's stderr unless given. */
  readonly logs?: DestinationStream;
}

/** Output on the process's stdout and stderr. */
export interface ProcessOutput extends Output {
  /** Whoever read stdout or stderr closed it: the command ends quietly, with exit status 0. */
  readonly closed: boolean;
}

export function processOutput(json: boolean): ProcessOutput {
  let closed = false;
  const onError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') throw error;
    // `petstore account list | head -1`: the reader has what it wanted, and the rest has nowhere to go.
    closed = true;
    process.exitCode = 0;
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
  const print = (stream: NodeJS.WriteStream, text: string): void => {
    if (!closed) stream.write(text);
  };
  return {
    ...textOutput(
      json,
      (text) => print(process.stdout, text),
      (text) => print(process.stderr, text),
    ),
    get closed() {
      return closed;
    },
  };
}

/**
 * The text a command prints, handed to `stdout` and `stderr`: the process's streams, or a test's strings.
 * Control characters that came from the arguments or the environment never reach the terminal as
 * they are, where they could move the cursor or recolour what follows: text shows them as `\xHH`
 * (lines keep their own line breaks; a message is one line, so its breaks are shown too), and JSON
 * as `\u00HH`.
 */
export function textOutput(json: boolean, stdout: (text: string) => void, stderr: (text: string) => void): Output {
  return {
    json,
    write: (line) => stdout(`${json ? jsonSafe(line) : linesVisible(line)}\n`),
    error: (code, message, usage) =>
      stderr(
        json
          ? `${jsonSafe(JSON.stringify({ error: { code, message } }))}\n`
          : usage === undefined
            ? `petstore: ${visible(message)}\n`
            : `${linesVisible(usage)}\n`,
      ),
  };
}

/** C0 controls, DEL and C1 controls: everything but printable ASCII and U+00A0 onwards. */
const CONTROL_CHARACTERS = /[^\x20-\x7e\u00a0-\u{10ffff}]/gu;
/** What JSON.stringify leaves as it is: DEL and the C1 controls (C1 includes CSI, U+009B). */
const UNESCAPED_BY_JSON = /[\u007f-\u009f]/g;

function hex(character: string): string {
  return character.charCodeAt(0).toString(16).padStart(2, '0');
}

/** Control characters as visible escapes: ESC is `\x1b`, a line break `\x0a`. */
export function visible(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => `\\x${hex(character)}`);
}

function linesVisible(text: string): string {
  return text.split('\n').map(visible).join('\n');
}

/** JSON text with every control character escaped, C1 included; still the same JSON value. */
function jsonSafe(json: string): string {
  return json.replace(UNESCAPED_BY_JSON, (character) => `\\u00${hex(character)}`);
}

export function iso(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

/** For JSON: an absent time stays null. */
function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

/** An account with its effective limits: the plan's, or the account's own on the enterprise plan. */
function accountJson(quotas: AccountQuotas, account: AccountRecord): object {
  const { name, plan, keyLimit } = account;
  return { name, plan, ...quotas.limitsOf(account), keyLimit, createdAt: iso(account.createdAt) };
}

export function keyJson(key: ApiKeyRecord): object {
  return {
    id: key.id,
    name: key.name,
    createdBy: key.createdBy,
    revokedBy: key.revokedBy,
    createdAt: iso(key.createdAt),
    lastUsedAt: isoOrNull(key.lastUsedAt),
    expiresAt: isoOrNull(key.expiresAt),
    revokedAt: isoOrNull(key.revokedAt),
    bannedUntil: activeBan(key),
    scopes: [...key.scopes],
  };
}

/** Who created or revoked a key, in a column: `cli:root`, `operator_token:<id>`, `key:<id>`; `-` where unknown. */
function actorText(actor: KeyActor | null): string {
  if (actor === null) return '-';
  return `${actor.kind}:${actor.kind === 'cli' ? actor.user : actor.id}`;
}

/** As `--scopes` takes them: `pets:read,usage:read`. */
function scopesText(key: ApiKeyRecord): string {
  return key.scopes.join(',');
}

function activeBan(key: ApiKeyRecord): string | null {
  return key.bannedUntil !== null && key.bannedUntil > Date.now() ? iso(key.bannedUntil) : null;
}

/** Accounts with their limits, a column per limit window (its flag's spelling: PER-MINUTE). */
export function printAccounts(out: Output, quotas: AccountQuotas, accounts: AccountRecord[], single: boolean): void {
  const json = (account: AccountRecord) => accountJson(quotas, account);
  if (out.json) {
    out.write(JSON.stringify(single ? json(accounts[0] as AccountRecord) : accounts.map(json)));
    return;
  }
  const { windows } = quotas;
  table(
    out,
    ['NAME', 'PLAN', ...windows.map((window) => window.flag.toUpperCase()), 'CREATED'],
    accounts.map((account) => {
      const limits = quotas.limitsOf(account);
      const counts = windows.map((window) => String(limits[window.field]));
      return [account.name, account.plan, ...counts, iso(account.createdAt)];
    }),
  );
}

/** The account, its limits, its keys and, where this process can know them, its current windows. */
export function printAccountSummary(
  out: Output,
  quotas: AccountQuotas,
  summary: AccountSummary,
  keys: ApiKeyRecord[],
  windows: AccountWindows,
): void {
  const { account, activeKeys } = summary;
  if (out.json) {
    out.write(
      JSON.stringify({
        ...accountJson(quotas, account),
        keys: summary.keys,
        activeKeys,
        keyList: keys.map(keyJson),
        windows: windows.known ? windows.windows.map((window) => ({ ...window, resetAt: iso(window.resetAt) })) : null,
        windowsNote: windows.known ? null : windows.reason,
      }),
    );
    return;
  }
  const limits = quotas.limitsOf(account);
  const source = account.plan === 'enterprise' ? "the account's own" : `the ${account.plan} plan's`;
  const rows: Array<[string, string]> = [
    ['name', account.name],
    ['plan', account.plan],
    ['created', iso(account.createdAt)],
    ...quotas.windows.map((window): [string, string] => [`per ${window.name}`, `${limits[window.field]} (${source})`]),
    ['keys', `${summary.keys} (${activeKeys} active, at most ${account.keyLimit})`],
  ];
  if (windows.known) {
    for (const window of windows.windows)
      rows.push([
        `${window.name} window`,
        `${window.remaining} of ${window.limit} left, resets ${iso(window.resetAt)}`,
      ]);
  } else {
    rows.push(['windows', `not shown: ${windows.reason}`]);
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  for (const [label, value] of rows) out.write(`${`${label}:`.padEnd(width)}  ${value}`);
  if (keys.length === 0) return;
  // The keys as `key list` shows them, after a blank line that ends the fields above.
  out.write('');
  printKeys(out, keys);
}

export function printKeys(out: Output, keys: ApiKeyRecord[]): void {
  if (out.json) {
    out.write(JSON.stringify(keys.map(keyJson)));
    return;
  }
  table(
    out,
    ['ID', 'SCOPES', 'CREATED', 'CREATED BY', 'LAST USED', 'EXPIRES', 'REVOKED', 'REVOKED BY', 'BANNED UNTIL'],
    keys.map((key) => [
      key.id,
      scopesText(key),
      iso(key.createdAt),
      actorText(key.createdBy),
      iso(key.lastUsedAt),
      iso(key.expiresAt),
      iso(key.revokedAt),
      key.revokedAt === null ? '-' : actorText(key.revokedBy),
      activeBan(key) ?? '-',
    ]),
  );
}

export function printCreatedKey(out: Output, created: CreatedKey): void {
  if (out.json) {
    out.write(JSON.stringify({ ...keyJson(created.record), key: created.key }));
    return;
  }
  const expiry = created.record.expiresAt === null ? '' : `, expires ${iso(created.record.expiresAt)}`;
  out.write(`created key ${created.record.id} with scopes ${scopesText(created.record)}${expiry}`);
  out.write('the key is shown once; store it now:');
  // The key alone on the last line, so scripts can take it with `tail -n 1`.
  out.write(created.key);
}

export function printOperatorTokens(out: Output, tokens: OperatorTokenRecord[]): void {
  if (out.json) {
    out.write(JSON.stringify(tokens.map(operatorTokenView)));
    return;
  }
  table(
    out,
    ['ID', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'],
    tokens.map((token) => [
      token.id,
      token.name ?? '-',
      iso(token.createdAt),
      iso(token.lastUsedAt),
      iso(token.revokedAt),
    ]),
  );
}

export function printCreatedOperatorToken(out: Output, created: CreatedOperatorToken): void {
  if (out.json) {
    out.write(JSON.stringify({ ...operatorTokenView(created.record), token: created.token }));
    return;
  }
  const label = created.record.name === null ? '' : ` (${created.record.name})`;
  out.write(`created operator token ${created.record.id}${label}`);
  out.write('it opens the admin API and the console on the operator listener; it is shown once, store it now:');
  // The token alone on the last line, so scripts can take it with `tail -n 1`.
  out.write(created.token);
}

function table(out: Output, header: string[], rows: string[][]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  out.write(line(header));
  for (const row of rows) out.write(line(row));
}
