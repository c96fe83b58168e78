import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { textOutput } from '../../src/cli/output.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { LIMIT_WINDOWS, type LimitWindows } from '../../src/domain/limit-windows.ts';

/**
 * Two ways to run one `petstore …` command line, both configured by an environment object alone,
 * as an operator's environment would configure it, and both answering what a shell would see:
 *
 * - `runCliInProcess`: the CLI's own entry function in this process, its stdout and stderr the
 *   exact text the process would print (log lines included), its status the exit status.
 * - `runCliProcess`: `node src/cli/main.ts …` as a child process, for what needs the boundary:
 *   exit codes as the shell sees them, start-up, signals, the real streams.
 */
export interface CliResult {
  readonly args: readonly string[];
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export type CliRunner = (args: readonly string[], env: Record<string, string>) => Promise<CliResult>;

const ROOT = join(import.meta.dirname, '..', '..');
const PROCESS_TIMEOUT_MS = 20_000;

/** `limitWindows`: the accounts' limit windows the CLI runs with, LIMIT_WINDOWS unless a test adds one. */
export async function runCliInProcess(
  args: readonly string[],
  env: Record<string, string>,
  limitWindows: LimitWindows = LIMIT_WINDOWS,
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const output = textOutput(
    // As src/cli/main.ts decides it: --json anywhere on the line.
    args.includes('--json'),
    (text) => (stdout += text),
    (text) => (stderr += text),
  );
  const logs = { write: (line: string) => void (stderr += line) };
  const status = await runCli(args, { ...output, logs }, env, limitWindows);
  return { args, status, stdout, stderr };
}

/** How an operator starts the CLI: `node src/cli/main.ts`, or the documented `npm run -s petstore --`. */
export const NODE_CLI: readonly string[] = [process.execPath, 'src/cli/main.ts'];
export const NPM_CLI: readonly string[] = ['npm', 'run', '-s', 'petstore', '--'];

export const runCliProcess: CliRunner = (args, env) => runCliLaunched(NODE_CLI, args, env);

/**
 * The command line run by `launch` from the checkout, with PATH (and HOME, for npm) and `env` only;
 * as another user with `as` (this process must be root).
 */
export function runCliLaunched(
  launch: readonly string[],
  args: readonly string[],
  env: Record<string, string>,
  as?: { readonly uid: number; readonly gid: number },
): Promise<CliResult> {
  const [command = '', ...launchArgs] = launch;
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...launchArgs, ...args], {
      cwd: ROOT,
      // Its own process group, killed whole: npm runs the CLI as a child of its own.
      detached: true,
      env: {
        PATH: process.env.PATH ?? '',
        ...(process.env.HOME === undefined ? {} : { HOME: process.env.HOME }),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...as,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A command that leaves a connection or timer open never ends: that fails here, not by hanging.
    const timer = setTimeout(() => killGroup(child.pid ?? 0), PROCESS_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      if (signal !== null)
        reject(new Error(`petstore ${args.join(' ')} was killed by ${signal} (stdout: ${stdout} stderr: ${stderr})`));
      else resolve({ args, status, stdout, stderr });
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group has ended already.
  }
}
