import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const ROOT = join(import.meta.dirname, '..', '..');
const MODULE = pathToFileURL(join(ROOT, 'src', 'platform', 'keep-tick-object-maps.ts')).href;
const SERVER = pathToFileURL(join(ROOT, 'src', 'server.ts')).href;
const CONFIG = pathToFileURL(join(ROOT, 'src', 'config.ts')).href;

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

/**
 * Runs the server in its own process with the module replaced by an empty one, as if its import
 * were deleted: nothing else may depend on it.
 */
const WITHOUT_MODULE = `
import { registerHooks } from 'node:module';
let replaced = 0;
registerHooks({
  load(url, context, nextLoad) {
    if (url !== ${JSON.stringify(MODULE)}) return nextLoad(url, context);
    replaced += 1;
    return { format: 'module', source: 'export {};', shortCircuit: true };
  },
});
const { startServer } = await import(${JSON.stringify(SERVER)});
const { loadConfig } = await import(${JSON.stringify(CONFIG)});
const server = await startServer(loadConfig({
  DATABASE_URL: process.env.TEST_DATABASE_URL,
  HOST: '127.0.0.1',
  PORT: '0',
  METRICS_PORT: 'off',
  LOG_LEVEL: 'silent',
  DEMO_BOOTSTRAP: 'false',
}));
try {
  const health = await fetch(server.url + '/healthz');
  const pets = await fetch(server.url + '/v1/pets');
  const body = await pets.json();
  process.stdout.write(JSON.stringify({ replaced, health: health.status, pets: pets.status, code: body.code }));
} finally {
  await server.stop();
}
`;

it('leaves the server working when it is not loaded', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-platform-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const flags = ['--conditions=@petstore/source', '--input-type=module', '--eval', WITHOUT_MODULE];
  const env = { ...process.env, TEST_DATABASE_URL: `sqlite:${join(directory, 'petstore.db')}` };
  const { stdout } = await promisify(execFile)(process.execPath, flags, { encoding: 'utf8', cwd: ROOT, env });
  assert.deepEqual(JSON.parse(stdout), { replaced: 1, health: 200, pets: 401, code: 'unauthorized' });
});
