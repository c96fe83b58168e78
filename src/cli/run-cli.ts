import { OperatorTokenService, operatorTokenView } from '../auth/operator-tokens.ts';
import type { Services } from '../composition-root.ts';
import { ConfigError, loadConfig } from '../config.ts';
import type { PlanChoice } from '../auth/account-service.ts';
import type { AuditContext } from '../domain/audit.ts';
import { DomainError, StorageUnavailableError } from '../errors.ts';
import { peekAccountWindows } from './account-windows.ts';
import { CommandLine, UsageError, type Options } from './command-line.ts';
import { LIMIT_WINDOWS, type LimitWindows } from '../domain/limit-windows.ts';
import { parseDuration } from '../domain/duration.ts';
import {
  iso,
  keyJson,
  printAccounts,
  printAccountSummary,
  printCreatedKey,
  printKeys,
  printOperatorTokens,
  printCreatedOperatorToken,
  processOutput,
  type Output,
} from './output.ts';
import { cliAuditContext } from '../audit/audit-actors.ts';
import { petstoreVersion } from '../version.ts';

/**
 * Operator CLI over the same services as the server: `npm run -s petstore -- <command>`.
 * Exit status: 0 done, 1 the operation failed (unknown account, taken name…), 2 bad arguments.
 * Every failure is one line on stderr: plain text, or `{"error": {code, message}}` with --json;
 * only a missing command prints, without --json, the usage to choose from instead.
 */

/** `by`: the OS user running the command, recorded in the audit trail with every change it makes. */
type Handler = (services: Services, options: Options, out: Output, by: AuditContext) => Promise<void>;

/** The commands that work on the store; serve, help and version are answered by runCli itself. */
const COMMANDS: Record<string, Handler> = {
  migrate: async (services, _options, out) => {
    const applied = await services.store.migrate();
    out.write(out.json ? JSON.stringify({ applied }) : `applied ${applied} migration(s); storage is up to date`);
  },
  'account create': async (services, options, out, by) => {
    const account = await services.accounts.createAccount(text(options.name), planChoice(services, options), by);
    printAccounts(out, services.quotas, [account], true);
  },
  'account set-plan': async (services, options, out, by) => {
    const account = await services.accounts.setPlan(text(options.name), planChoice(services, options), by);
    printAccounts(out, services.quotas, [account], true);
  },
  'account set-key-limit': async (services, options, out, by) => {
    const limit = text(options['key-limit']);
    // Checked by the service too; a value that is not a whole number never reaches it as one.
    const keyLimit = /^[0-9]{1,6}$/.test(limit) ? Number(limit) : Number.NaN;
    if (Number.isNaN(keyLimit)) throw new UsageError(`--key-limit must be a positive integer (got '${limit}')`);
    const account = await services.accounts.setKeyLimit(text(options.name), keyLimit, by);
    printAccounts(out, services.quotas, [account], true);
  },
  'account list': async (services, _options, out) =>
    printAccounts(out, services.quotas, await services.accounts.listAccounts(), false),
  'account show': async (services, options, out) => {
    const summary = await services.accounts.describeAccount(text(options.name));
    const keys = await services.accounts.listKeys(summary.account.name);
    const windows = await peekAccountWindows(services, summary.account);
    printAccountSummary(out, services.quotas, summary, keys, windows);
  },
  'key create': async (services, options, out, by) => {
    const expiresIn = options['expires-in'] === undefined ? undefined : duration(text(options['expires-in']));
    const choice = { expiresInMs: expiresIn, scopes: scopeNames(options.scopes) };
    printCreatedKey(out, await services.accounts.createKey(text(options.account), choice, by));
  },
  'key list': async (services, options, out) => printKeys(out, await services.accounts.listKeys(text(options.account))),
  'key revoke': async (services, options, out, by) => {
    const key = await services.accounts.revokeKey(text(options.id), by);
    if (out.json) out.write(JSON.stringify(keyJson(key)));
    else out.write(`revoked ${key.id} at ${iso(key.revokedAt)}; it is refused everywhere within one second`);
  },
  'ban lift': async (services, options, out, by) => {
    const key = await services.accounts.liftBan(text(options.id), by);
    if (out.json) out.write(JSON.stringify(keyJson(key)));
    else out.write(`lifted the ban on ${key.id}; it is accepted everywhere within one second`);
  },
  'operator token create': async (services, options, out, by) => {
    const name = options.name === undefined ? undefined : text(options.name);
    printCreatedOperatorToken(out, await operatorTokens(services).create(name, by));
  },
  'operator token list': async (services, _options, out) =>
    printOperatorTokens(out, await operatorTokens(services).list()),
  'operator token revoke': async (services, options, out, by) => {
    const token = await operatorTokens(services).revoke(text(options.id), by);
    if (out.json) out.write(JSON.stringify(operatorTokenView(token)));
    else
      out.write(
        `revoked operator token ${token.id} at ${iso(token.revokedAt)}; ` +
          'it is refused at once everywhere, and its console sessions are ended',
      );
  },
};

function operatorTokens(services: Services): OperatorTokenService {
  return new OperatorTokenService(services.store, services.clock, services.store.audit);
}

/**
 * Runs one command line and answers its exit status (-1 for serve: the server decides when the
 * process ends). Commands over the store take their configuration from `environment`; serve
 * always from the process's. `limitWindows`: the accounts' limit windows, whose flags the plan's
 * commands take (LIMIT_WINDOWS unless told: tests add one).
 */
export async function runCli(
  argv: readonly string[],
  out: Output = processOutput(argv.includes('--json')),
  environment: NodeJS.ProcessEnv = process.env,
  limitWindows: LimitWindows = LIMIT_WINDOWS,
): Promise<number> {
  const commandLine = new CommandLine(limitWindows);
  let parsed: { command: string; options: Options };
  try {
    parsed = commandLine.parse(argv);
  } catch (error) {
    const usage = error instanceof UsageError ? error : new UsageError(messageOf(error));
    return failUsage(out, usage);
  }
  switch (parsed.command) {
    case 'help':
      out.write(out.json ? JSON.stringify(commandLine.helpJson()) : commandLine.usageText());
      return 0;
    case 'version':
      return printVersion(out);
    case 'serve': {
      // Modules are imported on use, so that each command loads only what it runs: the HTTP app only for serve.
      const { main: serve } = await import('../server.ts');
      await serve();
      return -1;
    }
    default:
      return runCommand(parsed.command, parsed.options, out, environment, limitWindows);
  }
}

function printVersion(out: Output): number {
  try {
    const version = petstoreVersion();
    out.write(out.json ? JSON.stringify({ name: 'petstore', version }) : `petstore ${version}`);
    return 0;
  } catch (error) {
    return failOperation(out, error);
  }
}

async function runCommand(
  name: string,
  options: Options,
  out: Output,
  environment: NodeJS.ProcessEnv,
  limitWindows: LimitWindows,
): Promise<number> {
  const command = COMMANDS[name] as Handler;
  let services: Services | undefined;
  try {
    const config = loadConfig(environment);
    const { buildServices, createLogger } = await import('../composition-root.ts');
    // Log lines (a Redis warning…) go to stderr: stdout carries only the command's output.
    services = await buildServices(config, {
      logger: createLogger(config.logLevel, out.logs ?? 2),
      watchReadiness: false,
      limitWindows,
    });
    // Every command works on a fresh store; `migrate` reports what it applied itself.
    if (name !== 'migrate') await services.store.migrate();
    await command(services, options, out, cliAuditContext(environment));
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
  const message = out.json || !error.pointsToHelp ? error.message : `${error.message} (see --help)`;
  out.error(error.code, message, error.usage);
  return 2;
}

function messageOf(error: unknown): string {
  if (error instanceof StorageUnavailableError && error.detail !== undefined)
    return `${error.message}: ${error.detail}`;
  return error instanceof Error ? error.message : String(error);
}

/** The plan, and the account's own limit in each window its flag gives (`--per-minute` as `perMinute`). */
function planChoice(services: Services, options: Options): PlanChoice {
  const limits = services.quotas.windows.map((window) => [window.field, count(options, window.flag)] as const);
  return { plan: text(options.plan), ...Object.fromEntries(limits) };
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

/**
 * `--scopes pets:read, usage:read` as the names typed, spaces around commas dropped; the account
 * service checks them (an empty, unknown or repeated one is refused, naming the valid scopes).
 */
function scopeNames(value: string | boolean | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return text(value)
    .split(',')
    .map((name) => name.trim());
}

function text(value: string | boolean | undefined): string {
  return typeof value === 'string' ? value : '';
}
