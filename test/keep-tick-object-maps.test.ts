import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const MODULE = pathToFileURL(join(import.meta.dirname, '..', 'src', 'keep-tick-object-maps.ts')).href;

/**
 * Runs in its own process, with V8's test intrinsics: after several full collections, a tick object
 * made now must still have the hidden class of the one held at start-up.
 */
const PROBE = `
const { heldTickObject, newTickObject } = await import(${JSON.stringify(MODULE)});
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
for (let round = 0; round < 5; round += 1) {
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
}
const fresh = newTickObject();
const held = heldTickObject();
const probe = { held: held !== undefined, distinct: held !== fresh, sameMap: haveSameMap(held, fresh) };
process.stdout.write(JSON.stringify(probe));
`;

it('holds a tick object whose hidden class later tick objects still share after full collections', async () => {
  const flags = ['--expose-gc', '--allow-natives-syntax', '--input-type=module', '--eval', PROBE];
  const { stdout } = await promisify(execFile)(process.execPath, flags, { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(stdout), { held: true, distinct: true, sameMap: true });
});
