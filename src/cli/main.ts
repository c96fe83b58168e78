import { processOutput } from './output.ts';
import { runCli } from './run-cli.ts';

const argv = process.argv.slice(2);
const out = processOutput(argv.includes('--json'));
const status = await runCli(argv, out);
// serve answers -1: the server decides when the process ends. A closed pipe has set status 0 already.
if (status >= 0 && !out.closed) process.exitCode = status;
