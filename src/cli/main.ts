import { runCli } from './run-cli.ts';

const status = await runCli(process.argv.slice(2));
// serve answers -1: the server decides when the process ends.
if (status >= 0) process.exitCode = status;
