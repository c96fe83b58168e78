import { warmUpNextTick } from './next-tick-warm-up.ts';

/**
 * What `npm start` runs: warms `process.nextTick` up, then loads the service and starts it.
 * The service's modules are imported only after the warm-up: only that order helped (the figures
 * are in next-tick-warm-up.ts).
 */
export async function runServer(): Promise<void> {
  await warmUpNextTick();
  const { main } = await import('./server.ts');
  await main();
}

if (import.meta.main) await runServer();
