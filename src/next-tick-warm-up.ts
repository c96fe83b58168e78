/** Calls per round and rounds: about 120,000 calls over 60 event-loop turns, some 50 ms at start-up. */
const CALLS_PER_ROUND = 1000;
const ROUNDS = 60;

/**
 * Makes `process.nextTick` hot, so that V8 optimises it before the server takes any traffic.
 *
 * Why: Node's HTTP and stream internals call `process.nextTick` five to seven times per request,
 * and each call builds a tick object keyed by symbols. In about a third of fresh processes
 * (14 of 48 measured on Node 24.21, with or without the limits step), V8 optimised `nextTick`
 * under load into code that adds those keys through the runtime on every call
 * (`Runtime_DefineKeyedOwnPropertyInLiteral`, a transition search per key). Such a process served
 * cached reads about a fifth slower for its whole life; which processes it hit was a matter of
 * timing. Optimised here, in a process that is doing nothing else, it was fast in all 16 processes
 * measured. The calls use both shapes Node's internals use (with and without an argument), and
 * rounds are separate turns so that the compiler's background jobs can finish and be installed.
 */
export async function warmUpNextTick(): Promise<void> {
  const ignore = (): void => {};
  await new Promise<void>((resolve) => {
    let roundsLeft = ROUNDS;
    const round = (): void => {
      for (let call = 0; call < CALLS_PER_ROUND; call += 1) {
        process.nextTick(ignore);
        process.nextTick(ignore, call);
      }
      roundsLeft -= 1;
      if (roundsLeft > 0) setImmediate(round);
      else setImmediate(resolve);
    };
    round();
  });
}
