import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MODULE_URL = new URL('../src/next-tick-warm-up.ts', import.meta.url).href;
/** V8's %GetOptimizationStatus bit for code optimised by TurboFan (src/runtime/runtime-test.cc). */
const TURBOFANNED = 1 << 6;

/** process.nextTick's optimisation status in a fresh Node process, after `prelude`. */
async function nextTickStatus(prelude: string): Promise<number> {
  const script = `${prelude}\nprocess.stdout.write(String(%GetOptimizationStatus(process.nextTick)));`;
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    timeout: 30_000,
  });
  return Number(stdout);
}

// The warm-up exists so that V8 optimises nextTick before any traffic (see its comment); if a
// Node upgrade stops it from reaching TurboFan, this says so and the warm-up needs a new look.
test('the warm-up leaves process.nextTick optimised by TurboFan, which a fresh process has not done', async () => {
  const fresh = await nextTickStatus('');
  const warmed = await nextTickStatus(
    `const { warmUpNextTick } = await import(${JSON.stringify(MODULE_URL)});\nawait warmUpNextTick();`,
  );
  assert.equal(fresh & TURBOFANNED, 0, `fresh status ${fresh.toString(2)}`);
  assert.equal(warmed & TURBOFANNED, TURBOFANNED, `warmed status ${warmed.toString(2)}`);
});
