/** Something to undo at the end of a run, last in first out. */
export type CleanUp = () => unknown;

/** Runs the clean-ups in reverse order, each once, logging rather than throwing what fails. */
async function runCleanUps(cleanUps: CleanUp[], log: (message: string) => void): Promise<void> {
  for (const step of cleanUps.splice(0).reverse())
    await (async () => step())().catch((error: unknown) => log(`clean-up: ${String(error)}`));
}

/**
 * Runs a benchmark's body and sets the exit status from it. What the body registers in `cleanUps` (servers,
 * schemas, worktrees, files) is undone at the end, on a failure, and on SIGINT or SIGTERM.
 */
export async function runEntry(
  body: (cleanUps: CleanUp[]) => Promise<number>,
  log: (message: string) => void,
): Promise<void> {
  const cleanUps: CleanUp[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () => (cleaning ??= runCleanUps(cleanUps, log));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
  }
  try {
    process.exitCode = await body(cleanUps);
  } catch (error) {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}
