import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { build } from 'esbuild';

const ROOT = join(import.meta.dirname, '..', '..');
const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

function isNodeOnly(path: string): boolean {
  return path.startsWith('node:') || BUILTINS.has(path) || BUILTINS.has(path.split('/')[0] ?? '');
}

describe('client: browser bundle', () => {
  it('bundles for the browser with no Node built-in module', async () => {
    const result = await build({
      entryPoints: [join(ROOT, 'client', 'src', 'index.ts')],
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    assert.deepEqual(result.errors, []);
    assert.equal(result.outputFiles.length, 1);
    assert.match(result.outputFiles[0]?.text ?? '', /PetstoreClient/);
    const inputs = Object.entries(result.metafile.inputs);
    assert.ok(inputs.length > 5, `the client's modules: ${inputs.map(([path]) => path).join(', ')}`);
    for (const [path, input] of inputs) {
      assert.ok(path.startsWith('client/src/'), `only the client's own modules, got ${path}`);
      const nodeOnly = input.imports.filter((imported) => isNodeOnly(imported.path));
      assert.deepEqual(nodeOnly, [], `${path} imports Node built-ins`);
    }
    for (const output of Object.values(result.metafile.outputs)) {
      assert.deepEqual(output.imports, [], 'nothing left for the runtime to import');
    }
  });
});
