import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Services } from '../composition-root.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { DomainError } from '../errors.ts';
import { limitsFor } from '../ratelimit/plans.ts';
import { peekAccountWindows } from './account-windows.ts';
import { parseDuration } from './duration.ts';
import {
  iso,
  keyJson,
  printAccounts,
  printAccountSummary,
  printCreatedKey,
  printKeys,
  processOutput,
  type Output,
} from './output.ts';

/**
 * Operator CLI over the same services as the server: `npm run -s petstore -- <command>`.
 * Exit status: 0 done, 1 the operation failed (unknown account, taken name…), 2 bad arguments.
 * Every failure is one line on stderr: plain text, or `{"error": {code, message}}` with --json.
 */
const USAGE = `usage: petstore <command> [options] [--json]

commands:
  serve                                         run the server (what npm start runs)
  migrate                                       apply pending storage migrations
  account create --name NAME --plan PLAN [--per-minute N --per-day N]
  account set-plan --name NAME --plan PLAN [--per-minute N --per-day N]
  account list                                  every account with its effective limits
  account show --name NAME                      limits, keys and (with REDIS_URL) the current windows
  key create --account NAME [--expires-in DURATION]   DURATION: 90s, 15m, 12h, 30d, 2w
  key list --account NAME
  key revoke --id KEY_ID
  ban lift --id KEY_ID                          end a key's temporary ban
  help                                          this text (also --help, -h)

plans: free, pro, business, enterprise (enterprise needs --per-minute and --per-day)
configuration comes from the environment (DATABASE_URL, …), as for the server
exit status: 0 done, 1 the operation failed, 2 bad arguments or configuration`;

/** Bad arguments (exit 2); `code` is what --json reports. */
export class UsageError extends Error {
  readonly code: string;
  constructor(message: string, code = 'invalid_arguments') {
    super(message);
    this.code = code;
  }
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
  'account show': {
    allowed: ['name'],
    required: ['name'],
    run: async (services, options, out) => {
      const summary = await services.accounts.describeAccount(text(options.name));
      const windows = await peekAccountWindows(services, summary.account, limitsFor(summary.account));
      printAccountSummary(out, summary, windows);
    },
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
  out: Output = processOutput(argv.includes('--json')),
): Promise<number> {
  let parsed: { command: string; options: Options };
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    const usage = error instanceof UsageError ? error : new UsageError(messageOf(error));
    return failUsage(out, usage);
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
  return runCommand(parsed.command, parsed.options, out);
}

async function runCommand(name: string, options: Options, out: Output): Promise<number> {
  const command = COMMANDS[name] as (typeof COMMANDS)[string];
  let services: Services | undefined;
  try {
    const config = loadConfig();
    const { buildServices, createLogger } = await import('../composition-root.ts');
    // Log lines (a Redis warning…) go to stderr: stdout carries only the command's output.
    services = await buildServices(config, { logger: createLogger(config.logLevel, 2) });
    // Every command works on a fresh store; `migrate` reports what it applied itself.
    if (name !== 'migrate') await services.store.migrate();
    await command.run(services, options, out);
    return 0;
  } catch (error) {
    return failOperation(out, error);
  } finally {
    await services?.close();
  }
}

/** Exit 2 for bad arguments or configuration, 1 for an operation that failed. */
function failOperation(out: Output, error: unknown): number {
  if (error instanceof UsageError) return failUsage(out, error);
  if (error instanceof ConfigError) {
    out.error('invalid_config', error.message);
    return 2;
  }
  if (error instanceof DomainError && error.code.startsWith('invalid_')) {
    out.error('invalid_arguments', error.message);
    return 2;
  }
  out.error(error instanceof DomainError ? error.code : 'failed', messageOf(error));
  return 1;
}

function failUsage(out: Output, error: UsageError): number {
  // With no command at all the usage is the most useful answer, on stderr since it is a failure.
  if (error.code === 'no_command' && !out.json) process.stderr.write(`${USAGE}\n`);
  else out.error(error.code, out.json ? error.message : `${error.message} (see --help)`);
  return 2;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function parseCommandLine(argv: readonly string[]): { command: string; options: Options } {
  const { values, positionals } = parseArgs({ args: [...argv], options: flags, allowPositionals: true, strict: true });
  const [group, action, ...extra] = positionals;
  if (values.help === true || group === 'help') return { command: 'help', options: values };
  if (group === undefined) throw new UsageError('no command given', 'no_command');
  if (group === 'serve' || group === 'migrate') {
    if (action !== undefined) throw new UsageError(`unexpected argument '${action}'`);
    checkFlags(group, values, [], []);
    return { command: group, options: values };
  }
  const command = `${group} ${action ?? ''}`.trim();
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command '${command}'`, 'unknown_command');
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
