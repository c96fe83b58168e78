/** Rounds of calls: about 150,000 calls over 60 event-loop turns, some 50–100 ms at start-up. */
const CALLS_PER_ROUND = 500;
const ROUNDS = 60;

/**
 * Makes `process.nextTick` hot before the service's modules load and before any traffic; called
 * first thing by src/main.ts.
 *
 * Why: Node's HTTP and stream internals call `process.nextTick` five to seven times per request,
 * and each call builds a tick object keyed by symbols. In about a quarter of fresh processes
 * (18 of 68 measured on Node 24.21, with or without the limits step), V8 ended up with an
 * optimised `nextTick` that adds those keys through the runtime on every call
 * (`Runtime_DefineKeyedOwnPropertyInLiteral` and a map-transition search per key, never
 * deoptimised). Such a process served cached reads about a fifth slower for its whole life, and
 * which processes it hit was chance. Warmed up after the modules had loaded, 11 of 52 processes
 * still did; warmed up before, none of 34. We did not pin down V8's trigger, hence the test that
 * at least checks the warm-up still reaches TurboFan.
 *
 * The calls take every shape nextTick handles (no argument to four or more), with an object as
 * argument: code optimised without feedback for a shape, or with small integers where Node passes
 * objects, was thrown away at the first real request. Rounds are separate turns, so that the
 * compiler's background jobs can finish and be installed.
 */
export async function warmUpNextTick(): Promise<void> {
  const ignore = (): void => {};
  const argument = { warmUp: true };
  await new Promise<void>((resolve) => {
    let roundsLeft = ROUNDS;
    const round = (): void => {
      for (let call = 0; call < CALLS_PER_ROUND; call += 1) {
        process.nextTick(ignore);
        process.nextTick(ignore, argument);
        process.nextTick(ignore, argument, argument);
        process.nextTick(ignore, argument, argument, argument);
        process.nextTick(ignore, argument, argument, argument, argument);
      }
      roundsLeft -= 1;
      if (roundsLeft > 0) setImmediate(round);
      else setImmediate(resolve);
    };
    round();
  });
}
