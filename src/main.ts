import { warmUpNextTick } from './next-tick-warm-up.ts';

/**
 * What `npm start` runs: warms `process.nextTick` up, then loads the service and starts it.
 * The service's modules are imported only after the warm-up, because that order is what
 * helped: warmed up after they had loaded, nextTick still ended up on its slow path in 11 of
 * 52 processes; warmed up before, in none of 34 (see next-tick-warm-up.ts).
 */
export async function runServer(): Promise<void> {
  await warmUpNextTick();
  const { main } = await import('./server.ts');
  await main();
}

if (import.meta.main) await runServer();
