import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LIMIT_WINDOWS, listed, type LimitWindows } from '../domain/limit-windows.ts';
import { KEY_SCOPES, SCOPE_MEANINGS } from '../domain/scopes.ts';
import { nearest } from './suggest.ts';

/** Bad arguments (exit 2); `code` is what --json reports. */
export class UsageError extends Error {
  readonly code: string;
  /** Without --json, printed on stderr instead of the one-line message: the usage to choose from. */
  readonly usage: string | undefined;
  /** Whether the one-line message ends with "(see --help)"; a suggestion already says what to type. */
  readonly pointsToHelp: boolean;

  constructor(message: string, options: { code?: string; usage?: string; pointsToHelp?: boolean } = {}) {
    super(message);
    this.code = options.code ?? 'invalid_arguments';
    this.usage = options.usage;
    this.pointsToHelp = options.pointsToHelp ?? true;
  }
}

/** The options of every command but the limit windows', which the table adds after --plan. */
const FIXED_FLAGS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  name: { type: 'string' },
  plan: { type: 'string' },
  account: { type: 'string' },
  'expires-in': { type: 'string' },
  scopes: { type: 'string' },
  id: { type: 'string' },
  'key-limit': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type FixedFlag = keyof typeof FIXED_FLAGS;
type Flags = Readonly<Record<string, { readonly type: 'boolean' | 'string'; readonly short?: string }>>;

/** The options in the order of the usage: an enterprise account's limits come after --plan. */
function flagsOf(windows: LimitWindows): Flags {
  const { json, help, version, name, plan, ...rest } = FIXED_FLAGS;
  const limits = Object.fromEntries(windows.map((window) => [window.flag, { type: 'string' } as const]));
  return { json, help, version, name, plan, ...limits, ...rest };
}

/** What a flag's value is, where a message about a missing value should say it. */
const VALUE_HINTS: Partial<Record<FixedFlag, string>> = {
  scopes: `one or more of ${KEY_SCOPES.join(', ')}, separated by commas`,
};

/** Options every command takes. */
const GLOBAL_FLAGS: readonly string[] = ['json', 'help', 'version'];

export type Options = Record<string, string | boolean | undefined>;

export interface CommandSpec {
  readonly name: string;
  /** What the usage shows after the name. */
  readonly synopsis: string;
  readonly description: string;
  /** The options it takes besides --json, --help and --version. */
  readonly options: readonly string[];
  readonly required: readonly string[];
}

/** Every command, in the order of the usage; the plan's commands take a flag per limit window. */
export function commandSpecs(windows: LimitWindows): readonly CommandSpec[] {
  const limitFlags = windows.map((window) => window.flag);
  const planChoice = `--name NAME --plan PLAN [${limitFlags.map((flag) => `--${flag} N`).join(' ')}]`;
  const needs = enterpriseNeeds(windows);
  return [
    { name: 'serve', synopsis: '', description: 'run the server (what npm start runs)', options: [], required: [] },
    { name: 'migrate', synopsis: '', description: 'apply pending storage migrations', options: [], required: [] },
    {
      name: 'account create',
      synopsis: planChoice,
      description: `create an account; enterprise needs ${needs}`,
      options: ['name', 'plan', ...limitFlags],
      required: ['name', 'plan'],
    },
    {
      name: 'account set-plan',
      synopsis: planChoice,
      description: "change an account's plan; servers apply it within one second",
      options: ['name', 'plan', ...limitFlags],
      required: ['name', 'plan'],
    },
    {
      name: 'account set-key-limit',
      synopsis: '--name NAME --key-limit N',
      description: "how many active keys the account's keys may create through /v1/keys (default 20)",
      options: ['name', 'key-limit'],
      required: ['name', 'key-limit'],
    },
    {
      name: 'account list',
      synopsis: '',
      description: 'every account with its effective limits',
      options: [],
      required: [],
    },
    {
      name: 'account show',
      synopsis: '--name NAME',
      description: 'limits, keys and (with REDIS_URL) the current windows',
      options: ['name'],
      required: ['name'],
    },
    {
      name: 'key create',
      synopsis: '--account NAME [--expires-in DURATION] [--scopes SCOPES]',
      description: 'a new key, printed once, alone on the last line',
      options: ['account', 'expires-in', 'scopes'],
      required: ['account'],
    },
    {
      name: 'key list',
      synopsis: '--account NAME',
      description: "the account's keys: scopes, created, last used, expiry, revocation, ban",
      options: ['account'],
      required: ['account'],
    },
    {
      name: 'key revoke',
      synopsis: '--id KEY_ID',
      description: 'refuse the key everywhere within one second',
      options: ['id'],
      required: ['id'],
    },
    {
      name: 'ban lift',
      synopsis: '--id KEY_ID',
      description: "end a key's temporary ban",
      options: ['id'],
      required: ['id'],
    },
    {
      name: 'operator token create',
      synopsis: '[--name LABEL]',
      description: 'a token for the admin API and console, printed once, alone on the last line',
      options: ['name'],
      required: [],
    },
    {
      name: 'operator token list',
      synopsis: '',
      description: 'every operator token: id, label, created, last used, revocation',
      options: [],
      required: [],
    },
    {
      name: 'operator token revoke',
      synopsis: '--id TOKEN_ID',
      description: 'refuse the operator token at once, on every instance',
      options: ['id'],
      required: ['id'],
    },
    { name: 'help', synopsis: '', description: 'this text (also --help, -h)', options: [], required: [] },
    {
      name: 'version',
      synopsis: '',
      description: 'the petstore version (also --version, -V)',
      options: [],
      required: [],
    },
  ];
}

/** `--per-minute and --per-day`: what the enterprise plan needs. */
function enterpriseNeeds(windows: LimitWindows): string {
  return listed(windows.map((window) => `--${window.flag}`));
}

/** The commands of LIMIT_WINDOWS' table, as the CLI runs by default. */
export const COMMAND_SPECS = commandSpecs(LIMIT_WINDOWS);

const DESCRIPTION_COLUMN = 48;
/** Where what a scope allows begins in the notes: after the longest name. */
const SCOPE_COLUMN = Math.max(...KEY_SCOPES.map((scope) => scope.length)) + 2;

/** Each scope on a line of its own, with what it lets a key do (src/domain/scopes.ts). */
const SCOPE_LINES = KEY_SCOPES.map((scope) => `  ${scope.padEnd(SCOPE_COLUMN)}${SCOPE_MEANINGS[scope]}`).join('\n');

function notes(windows: LimitWindows): string {
  return `plans: free, pro, business, enterprise (enterprise needs ${enterpriseNeeds(windows)})
DURATION: 90s, 15m, 12h, 30d, 2w
SCOPES: one or more of these, comma-separated:
${SCOPE_LINES}
  without --scopes a key holds every scope but keys:manage, those of later releases included;
  keys:manage only when named; a key's scopes never change: to change them, create a new key
  and revoke the old one
--json: one line of JSON instead of text, failures included; help --json lists the commands
configuration comes from the environment (DATABASE_URL, …), as for the server
exit status: 0 done, 1 the operation failed, 2 bad arguments or configuration`;
}

interface OptionToken {
  readonly name: string;
  /** As typed: `--name`, `-h`. */
  readonly rawName: string;
  readonly value: string | undefined;
  readonly inlineValue: boolean | undefined;
}

/**
 * The command line of the CLI over a table of limit windows (a flag per window on the plan's
 * commands, and their help): made once, when the CLI starts.
 */
export class CommandLine {
  private readonly flags: Flags;
  private readonly specs: readonly CommandSpec[];
  private readonly byName: ReadonlyMap<string, CommandSpec>;
  private readonly notes: string;
  /** Most words a command name has (`operator token create`). */
  private readonly longestName: number;

  constructor(windows: LimitWindows = LIMIT_WINDOWS) {
    this.flags = flagsOf(windows);
    this.specs = commandSpecs(windows);
    this.byName = new Map(this.specs.map((spec) => [spec.name, spec]));
    this.notes = notes(windows);
    this.longestName = Math.max(...this.specs.map((spec) => spec.name.split(' ').length));
  }

  /** The usage of every command, or of the commands of one group (`account`). */
  usageText(group?: string): string {
    const specs = group === undefined ? this.specs : this.groupSpecs(group);
    const lines = specs.flatMap((spec) => {
      const left = `  ${spec.name} ${spec.synopsis}`.trimEnd();
      if (left.length < DESCRIPTION_COLUMN) return [`${left.padEnd(DESCRIPTION_COLUMN)}${spec.description}`];
      return [left, `${' '.repeat(DESCRIPTION_COLUMN)}${spec.description}`];
    });
    if (group !== undefined)
      return [`usage: petstore ${group} <command> [options] [--json]`, '', `${group} commands:`, ...lines].join('\n');
    return ['usage: petstore <command> [options] [--json]', '', 'commands:', ...lines, '', this.notes].join('\n');
  }

  /** The commands as data, for `help --json`. */
  helpJson(): object {
    return {
      usage: 'petstore <command> [options] [--json]',
      commands: this.specs.map((spec) => ({
        name: spec.name,
        usage: `${spec.name} ${spec.synopsis}`.trimEnd(),
        options: spec.options.map((flag) => `--${flag}`),
        required: spec.required.map((flag) => `--${flag}`),
        description: spec.description,
      })),
      globalOptions: GLOBAL_FLAGS.map((flag) => `--${flag}`),
    };
  }

  /** The command named by `argv` and its options; throws UsageError. */
  parse(argv: readonly string[]): { command: string; options: Options } {
    // Leniently first, to see every token: node:util's own errors name no alternative and span lines.
    const { tokens } = parseArgs({
      args: [...argv],
      options: this.flags,
      allowPositionals: true,
      strict: false,
      tokens: true,
    });
    const positionals = tokens.flatMap((token) => (token.kind === 'positional' ? [token.value] : []));
    const options = tokens.flatMap((token): OptionToken[] =>
      token.kind === 'option'
        ? [{ name: token.name, rawName: token.rawName, value: token.value, inlineValue: token.inlineValue }]
        : [],
    );
    const given = new Set(options.map((token) => token.name));
    if (given.has('help') || positionals[0] === 'help') return { command: 'help', options: {} };
    if (given.has('version')) return { command: 'version', options: {} };

    const spec = this.specOf(positionals);
    const unknown = options.find((token) => !Object.hasOwn(this.flags, token.name));
    if (unknown) throw this.unknownOption(unknown, spec);
    if (positionals.length === 0)
      throw new UsageError('no command given', { code: 'no_command', usage: this.usageText(), pointsToHelp: false });
    if (!spec) throw this.unknownCommand(positionals);
    const unexpected = positionals[spec.name.split(' ').length];
    if (unexpected !== undefined) throw new UsageError(`unexpected argument '${unexpected}'`);
    for (const token of options) this.checkValue(token);
    const values = this.strictValues(argv);
    checkFlags(spec, values);
    return { command: spec.name, options: values };
  }

  private groupSpecs(group: string): CommandSpec[] {
    return this.specs.filter((spec) => spec.name.startsWith(`${group} `));
  }

  /** `--nmae` → did you mean --name?, among the options of the command when it is known. */
  private unknownOption(token: OptionToken, spec: CommandSpec | undefined): UsageError {
    const candidates = spec ? [...spec.options, ...GLOBAL_FLAGS] : Object.keys(this.flags);
    const suggestion = token.rawName.startsWith('--') ? nearest(token.name, candidates) : undefined;
    if (suggestion === undefined) return new UsageError(`unknown option ${token.rawName}`);
    return new UsageError(`unknown option ${token.rawName}; did you mean --${suggestion}?`, { pointsToHelp: false });
  }

  /** The command whose words begin the positionals (at most one does: no name is the start of another). */
  private specOf(positionals: readonly string[]): CommandSpec | undefined {
    for (let words = 1; words <= positionals.length; words += 1) {
      const spec = this.byName.get(positionals.slice(0, words).join(' '));
      if (spec) return spec;
    }
    return undefined;
  }

  /**
   * A group alone (`account`, `operator token`) lists its commands; otherwise the nearest command is
   * suggested, or the group's commands are listed.
   */
  private unknownCommand(positionals: readonly string[]): UsageError {
    // The longest run of typed words that names a group of commands.
    let depth = 0;
    while (depth < positionals.length && this.groupSpecs(positionals.slice(0, depth + 1).join(' ')).length > 0)
      depth += 1;
    const group = positionals.slice(0, depth).join(' ');
    const typed = positionals.slice(0, this.longestName).join(' ');
    const inGroup = this.groupSpecs(group).map((spec) => spec.name);
    if (depth > 0 && depth === positionals.length)
      return new UsageError(`'${group}' needs a command: ${inGroup.join(', ')}`, {
        code: 'no_command',
        usage: this.usageText(group),
        pointsToHelp: false,
      });
    const suggestion = this.completion(positionals);
    if (suggestion !== undefined)
      return new UsageError(`unknown command '${typed}'; did you mean ${suggestion}?`, {
        code: 'unknown_command',
        pointsToHelp: false,
      });
    const listing = depth > 0 ? `; ${group} commands: ${inGroup.join(', ')}` : '';
    return new UsageError(`unknown command '${typed}'${listing}`, { code: 'unknown_command' });
  }

  /** The words that may follow `prefix` ('' for the first word) in command names. */
  private nextWords(prefix: string): string[] {
    const depth = prefix === '' ? 0 : prefix.split(' ').length;
    const specs = prefix === '' ? this.specs : this.groupSpecs(prefix);
    return [...new Set(specs.map((spec) => spec.name.split(' ')[depth] as string))];
  }

  /**
   * The typed words corrected word by word, each to the nearest word its place allows, up to a whole
   * command. Words are compared one by one: whole command lines share their group's letters, which
   * would make `account delete` look near enough to `account create`. When a word has no near match,
   * the words corrected so far are suggested if any was corrected (`acount delete` → account), else
   * nothing is.
   */
  private completion(words: readonly string[]): string | undefined {
    let prefix = '';
    let corrected = false;
    for (const word of words) {
      const choices = this.nextWords(prefix);
      if (choices.length === 0 || this.byName.has(prefix)) break;
      const match = choices.includes(word) ? word : nearest(word, choices);
      if (match === undefined) return corrected ? prefix : undefined;
      corrected ||= match !== word;
      prefix = prefix === '' ? match : `${prefix} ${match}`;
    }
    return corrected ? prefix : undefined;
  }

  /** What node:util would refuse in strict mode, said in one line. */
  private checkValue(token: OptionToken): void {
    const flag = `--${token.name}`;
    if (this.flags[token.name]?.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${flag} takes no value`);
      return;
    }
    if (token.value === undefined) throw needsValue(token.name);
    // `--name --json`: the value was most likely forgotten; a value that starts with a dash is written inline.
    if (!token.inlineValue && token.value.startsWith('-'))
      throw new UsageError(`${flag} needs a value (got ${token.value}; write ${flag}=${token.value} if you mean it)`);
  }

  private strictValues(argv: readonly string[]): Options {
    try {
      return parseArgs({ args: [...argv], options: this.flags, allowPositionals: true, strict: true }).values;
    } catch (error) {
      // Not expected after the checks above; if it happens, still one line.
      throw new UsageError((error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' '));
    }
  }
}

function needsValue(flag: string): UsageError {
  const hint = Object.hasOwn(VALUE_HINTS, flag) ? VALUE_HINTS[flag as FixedFlag] : undefined;
  return new UsageError(`--${flag} needs a value${hint === undefined ? '' : `: ${hint}`}`);
}

function checkFlags(spec: CommandSpec, values: Options): void {
  for (const [flag, value] of Object.entries(values)) {
    if (GLOBAL_FLAGS.includes(flag) || value === undefined) continue;
    if (!spec.options.includes(flag)) throw new UsageError(`'${spec.name}' does not take --${flag}`);
    if (value === '') throw needsValue(flag);
  }
  for (const flag of spec.required)
    if (values[flag] === undefined) throw new UsageError(`'${spec.name}' needs --${flag}`);
}
