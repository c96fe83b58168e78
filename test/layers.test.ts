import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The layers of docs/architecture.md, read from the imports of every source file (static, dynamic and
 * JSDoc `@import`): the records and the storage seam are the domain's, so storage is a backend that
 * only the composition root picks and nothing else names, not even for a type; and the domain is the
 * ground floor, which imports only itself and the typed errors.
 */

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

/** `from '…'`, `import('…')` and `import '…'`, in TypeScript and in the JSDoc of the console's scripts. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'([^']+)'/g;

interface Import {
  /** The importing file, relative to the repository. */
  readonly file: string;
  /** The imported file, relative to the repository; a package keeps its name. */
  readonly target: string;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:ts|js)$/.test(entry.name) ? [path] : [];
  });
}

function importsOf(path: string): Import[] {
  const file = relative(ROOT, path);
  return [...readFileSync(path, 'utf8').matchAll(SPECIFIER)].map(([, specifier = '']) => ({
    file,
    target: specifier.startsWith('.') ? relative(ROOT, resolve(dirname(path), specifier)) : specifier,
  }));
}

const IMPORTS = sourceFiles(SRC).flatMap(importsOf);

function shown(imports: readonly Import[]): string {
  return imports.map(({ file, target }) => `${file} imports ${target}`).join('\n');
}

describe('Layers', () => {
  it('reads the imports it checks', () => {
    // A pattern that matched nothing would pass every rule below.
    assert.ok(IMPORTS.length > 500, `${IMPORTS.length} imports`);
    assert.ok(IMPORTS.some((i) => i.file === 'src/composition-root.ts' && i.target === 'src/storage/open-store.ts'));
    // The console's modules name the server's types in JSDoc.
    const planInputs = 'src/operator/console/modules/core/plan-inputs.js';
    assert.ok(IMPORTS.some((i) => i.file === planInputs && i.target === 'src/domain/limit-windows.ts'));
  });

  it('lets only storage itself and the composition root import storage, for a type or anything else', () => {
    const outside = IMPORTS.filter(
      ({ file, target }) =>
        target.startsWith('src/storage/') && !file.startsWith('src/storage/') && file !== 'src/composition-root.ts',
    );
    assert.deepEqual(outside, [], shown(outside));
  });

  it('keeps the domain on the ground floor: it imports the domain and the typed errors alone', () => {
    const upward = IMPORTS.filter(
      ({ file, target }) =>
        file.startsWith('src/domain/') && !target.startsWith('src/domain/') && target !== 'src/errors.ts',
    );
    assert.deepEqual(upward, [], shown(upward));
  });
});
