import fc from 'fast-check';
import type { FuzzRequest } from '../support/fuzz-cases.ts';
import { FuzzFailure, FuzzTally, describeRequest, fuzzProperty, startFuzzTarget } from '../support/fuzz-model.ts';
import { request, type HttpTarget } from '../support/http-client.ts';
import { wholeNumberSetting } from '../support/campaign-settings.ts';
import { BACKEND_PAIRS } from '../support/each-backend.ts';
import type { BackendPair } from '../support/test-app.ts';

/**
 * The long fuzz campaign: `npm run fuzz`. Every input class is generated, defects being fixed
 * elsewhere included. Each new failure class is shrunk to a small counterexample and printed; the
 * campaign then goes on with that class tolerated (counted, not stopping), until FUZZ_RUNS cases ran.
 *
 *   FUZZ_RUNS      cases to run (default 100000)
 *   FUZZ_SEED      first seed (default: random, printed)
 *   FUZZ_TIMEOUT   milliseconds one case may take before it counts as a hang (default 5000)
 *   FUZZ_BACKEND   sqlite (default: a SQLite file, limits in memory) or postgres (the test PostgreSQL and Redis)
 */
interface Counterexample {
  readonly failureClass: string;
  readonly request: FuzzRequest;
  readonly seed: number;
  readonly path: string;
}

async function campaign(): Promise<number> {
  const runs = wholeNumberSetting('FUZZ_RUNS', 100_000);
  const firstSeed = wholeNumberSetting('FUZZ_SEED', Math.floor(Math.random() * 2 ** 31));
  const timeoutMs = wholeNumberSetting('FUZZ_TIMEOUT', 5000);
  const backend = backendSetting();
  console.log(`fuzz campaign: ${runs} cases, seed ${firstSeed}, ${timeoutMs} ms per case, on ${backend.title}`);

  const target = await startFuzzTarget(backend);
  const tally = new FuzzTally();
  const tolerated = new Set<string>();
  const found: Counterexample[] = [];
  const started = Date.now();
  let remaining = runs;
  let seed = firstSeed;
  try {
    while (remaining > 0) {
      const property = fuzzProperty(target, tally, { timeoutMs, tolerated });
      const details = await fc.check(property, { numRuns: remaining, seed });
      remaining -= details.numRuns;
      if (!details.failed) break;
      const error = details.errorInstance;
      if (!(error instanceof FuzzFailure) || details.counterexample === null) throw error;
      const [request] = details.counterexample;
      found.push({ failureClass: error.failureClass, request, seed, path: details.counterexamplePath ?? '' });
      console.log(`\nnew failure class: ${error.failureClass}`);
      console.log(`  shrunk (${details.numShrinks} steps): ${describeRequest(request)}`);
      console.log(
        `  replay: seed ${seed}, path ${details.counterexamplePath}; input classes: ${request.tags.join(', ')}`,
      );
      tolerated.add(error.failureClass);
      seed += 1;
    }
    const healthy = await healthz(target.app);
    console.log(`\n${tally.summary()}`);
    console.log(`seconds: ${Math.round((Date.now() - started) / 1000)}; /healthz afterwards: ${healthy}`);
    console.log(`counterexamples: ${found.length}`);
    for (const { failureClass, request } of found) {
      console.log(`- ${failureClass} [${request.tags.join(', ')}]\n    ${describeRequest(request)}`);
    }
    return found.length === 0 && healthy === 200 ? 0 : 1;
  } finally {
    await target.app.close();
  }
}

function backendSetting(): BackendPair {
  const name = process.env['FUZZ_BACKEND'] || 'sqlite';
  const pair = BACKEND_PAIRS.find((candidate) => candidate.name === name);
  if (pair === undefined) throw new Error(`FUZZ_BACKEND must be sqlite or postgres (got ${name})`);
  if (pair.skip !== undefined) throw new Error(`FUZZ_BACKEND=${name}: ${pair.skip}`);
  return pair;
}

async function healthz(app: HttpTarget): Promise<number | string> {
  try {
    return (await request(app, '/healthz')).status;
  } catch (error) {
    return String(error);
  }
}

process.exitCode = await campaign();
