import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CreatedKey } from '../auth/account-service.ts';
import type { Services } from '../composition-root.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { DomainError } from '../errors.ts';
import type { AccountRecord, ApiKeyRecord } from '../storage/store.ts';
import { parseDuration } from './duration.ts';

/**
 * Operator CLI over the same services as the server: `npm run -s petstore -- <command>`.
 * Exit status: 0 done, 1 the operation failed (unknown account, taken name…), 2 bad arguments.
 */
const USAGE = `usage: petstore <command> [options] [--json]

commands:
  serve                                         run the server (what npm start runs)
  migrate                                       apply pending storage migrations
  account create --name NAME --plan PLAN [--per-minute N --per-day N]
  account set-plan --name NAME --plan PLAN [--per-minute N --per-day N]
  account list
  key create --account NAME [--expires-in DURATION]   DURATION: 90s, 15m, 12h, 30d, 2w
  key list --account NAME
  key revoke --id KEY_ID
  ban lift --id KEY_ID                          end a key's temporary ban

plans: free, pro, business, enterprise (enterprise needs --per-minute and --per-day)
configuration comes from the environment (DATABASE_URL, …), as for the server`;

export class UsageError extends Error {}

interface Output {
  json: boolean;
  write(line: string): void;
}

type Options = Record<string, string | boolean | undefined>;
type Handler = (services: Services, options: Options, out: Output) => Promise<void>;

const flags = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  plan: { type: 'string' },
  'per-minute': { type: 'string' },
  'per-day': { type: 'string' },
  account: { type: 'string' },
  'expires-in': { type: 'string' },
  id: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const COMMANDS: Record<string, { allowed: readonly string[]; required: readonly string[]; run: Handler }> = {
  migrate: {
    allowed: [],
    required: [],
    run: async (services, _options, out) => {
      const applied = await services.store.migrate();
      out.write(out.json ? JSON.stringify({ applied }) : `applied ${applied} migration(s); storage is up to date`);
    },
  },
  'account create': {
    allowed: ['name', 'plan', 'per-minute', 'per-day'],
    required: ['name', 'plan'],
    run: async (services, options, out) => {
      const account = await services.accounts.createAccount(text(options.name), planChoice(options));
      printAccounts(out, [account], true);
    },
  },
  'account set-plan': {
    allowed: ['name', 'plan', 'per-minute', 'per-day'],
    required: ['name', 'plan'],
    run: async (services, options, out) => {
      const account = await services.accounts.setPlan(text(options.name), planChoice(options));
      printAccounts(out, [account], true);
    },
  },
  'account list': {
    allowed: [],
    required: [],
    run: async (services, _options, out) => printAccounts(out, await services.accounts.listAccounts(), false),
  },
  'key create': {
    allowed: ['account', 'expires-in'],
    required: ['account'],
    run: async (services, options, out) => {
      const expiresIn = options['expires-in'] === undefined ? undefined : duration(text(options['expires-in']));
      printCreatedKey(out, await services.accounts.createKey(text(options.account), expiresIn));
    },
  },
  'key list': {
    allowed: ['account'],
    required: ['account'],
    run: async (services, options, out) => printKeys(out, await services.accounts.listKeys(text(options.account))),
  },
  'key revoke': {
    allowed: ['id'],
    required: ['id'],
    run: async (services, options, out) => {
      const key = await services.accounts.revokeKey(text(options.id));
      if (out.json) out.write(JSON.stringify(keyJson(key)));
      else out.write(`revoked ${key.id} at ${iso(key.revokedAt)}; it is refused everywhere within one second`);
    },
  },
  'ban lift': {
    allowed: ['id'],
    required: ['id'],
    run: async (services, options, out) => {
      const key = await services.accounts.liftBan(text(options.id));
      if (out.json) out.write(JSON.stringify(keyJson(key)));
      else out.write(`lifted the ban on ${key.id}; it is accepted everywhere within one second`);
    },
  },
};

export async function runCli(
  argv: readonly string[],
  out: Output = stdoutOutput(argv.includes('--json')),
): Promise<number> {
  let parsed: { command: string; options: Options };
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    process.stderr.write(`petstore: ${error instanceof Error ? error.message : String(error)} (see --help)\n`);
    return 2;
  }
  if (parsed.command === 'help') {
    out.write(USAGE);
    return 0;
  }
  // Modules are imported on use, so that each command loads only what it runs: the HTTP app only for serve.
  if (parsed.command === 'serve') {
    const { main: serve } = await import('../server.ts');
    await serve();
    return -1;
  }
  const command = COMMANDS[parsed.command] as (typeof COMMANDS)[string];
  let services: Services | undefined;
  try {
    const { buildServices } = await import('../composition-root.ts');
    services = await buildServices(loadConfig());
    // Every command works on a fresh store; `migrate` reports what it applied itself.
    if (parsed.command !== 'migrate') await services.store.migrate();
    await command.run(services, parsed.options, out);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) return fail(error.message, 2);
    if (error instanceof DomainError) return fail(error.message, error.code.startsWith('invalid_') ? 2 : 1);
    return fail(error instanceof Error ? error.message : String(error), 1);
  } finally {
    await services?.close();
  }
}

function parseCommandLine(argv: readonly string[]): { command: string; options: Options } {
  const { values, positionals } = parseArgs({ args: [...argv], options: flags, allowPositionals: true, strict: true });
  if (values.help === true || positionals.length === 0) return { command: 'help', options: values };
  const [group, action, ...extra] = positionals;
  if (group === 'serve' || group === 'migrate') {
    if (action !== undefined) throw new UsageError(`unexpected argument '${action}'`);
    checkFlags(group, values, [], []);
    return { command: group, options: values };
  }
  const command = `${group} ${action ?? ''}`.trim();
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command '${command}'`);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  checkFlags(command, values, spec.allowed, spec.required);
  return { command, options: values };
}

function checkFlags(command: string, values: Options, allowed: readonly string[], required: readonly string[]): void {
  for (const [flag, value] of Object.entries(values)) {
    if (flag === 'json' || flag === 'help' || value === undefined) continue;
    if (!allowed.includes(flag)) throw new UsageError(`'${command}' does not take --${flag}`);
    if (value === '') throw new UsageError(`--${flag} needs a value`);
  }
  for (const flag of required) if (values[flag] === undefined) throw new UsageError(`'${command}' needs --${flag}`);
}

function planChoice(options: Options): { plan: string; perMinute?: number; perDay?: number } {
  return { plan: text(options.plan), perMinute: count(options, 'per-minute'), perDay: count(options, 'per-day') };
}

function count(options: Options, flag: string): number | undefined {
  const value = options[flag];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,14}$/.test(value))
    throw new UsageError(`--${flag} must be a positive integer (got '${String(value)}')`);
  return Number(value);
}

function duration(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw new UsageError(`--expires-in must be a duration such as 90s, 15m, 12h, 30d or 2w (got '${value}')`);
  return ms;
}

function text(value: string | boolean | undefined): string {
  return typeof value === 'string' ? value : '';
}

function iso(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

function accountJson(account: AccountRecord): object {
  return {
    name: account.name,
    plan: account.plan,
    perMinute: account.perMinute,
    perDay: account.perDay,
    createdAt: iso(account.createdAt),
  };
}

function keyJson(key: ApiKeyRecord): object {
  return {
    id: key.id,
    createdAt: iso(key.createdAt),
    lastUsedAt: key.lastUsedAt === null ? null : iso(key.lastUsedAt),
    expiresAt: key.expiresAt === null ? null : iso(key.expiresAt),
    revokedAt: key.revokedAt === null ? null : iso(key.revokedAt),
    bannedUntil: activeBan(key),
  };
}

function activeBan(key: ApiKeyRecord): string | null {
  return key.bannedUntil !== null && key.bannedUntil > Date.now() ? iso(key.bannedUntil) : null;
}

function printAccounts(out: Output, accounts: AccountRecord[], single: boolean): void {
  if (out.json) {
    out.write(JSON.stringify(single ? accountJson(accounts[0] as AccountRecord) : accounts.map(accountJson)));
    return;
  }
  table(
    out,
    ['NAME', 'PLAN', 'PER-MINUTE', 'PER-DAY', 'CREATED'],
    accounts.map((account) => [
      account.name,
      account.plan,
      String(account.perMinute ?? '-'),
      String(account.perDay ?? '-'),
      iso(account.createdAt),
    ]),
  );
}

function printKeys(out: Output, keys: ApiKeyRecord[]): void {
  if (out.json) {
    out.write(JSON.stringify(keys.map(keyJson)));
    return;
  }
  table(
    out,
    ['ID', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED', 'BANNED UNTIL'],
    keys.map((key) => [
      key.id,
      iso(key.createdAt),
      iso(key.lastUsedAt),
      iso(key.expiresAt),
      iso(key.revokedAt),
      activeBan(key) ?? '-',
    ]),
  );
}

function printCreatedKey(out: Output, created: CreatedKey): void {
  if (out.json) {
    out.write(JSON.stringify({ ...keyJson(created.record), key: created.key }));
  } else {
    const expiry = created.record.expiresAt === null ? '' : `, expires ${iso(created.record.expiresAt)}`;
    out.write(`created key ${created.record.id}${expiry}`);
    out.write('the key is shown once; store it now:');
  }
  // The key alone on the last line, so scripts can take it with `tail -n 1`.
  if (!out.json) out.write(created.key);
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

function fail(message: string, status: number): number {
  process.stderr.write(`petstore: ${message}\n`);
  return status;
}

function stdoutOutput(json: boolean): Output {
  return { json, write: (line) => void process.stdout.write(`${line}\n`) };
}

if (import.meta.main) {
  const status = await runCli(process.argv.slice(2));
  if (status >= 0) process.exitCode = status;
}
