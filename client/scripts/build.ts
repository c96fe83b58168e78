// Builds the package into dist/: ESM JavaScript and declarations, from a clean directory. Run by `prepack`.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const PACKAGE = join(import.meta.dirname, '..');
const DIST = join(PACKAGE, 'dist');
/** A relative specifier ending in .ts, in an import, an export or an import type. */
const TS_SPECIFIER = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]*?)\.ts(['"])/g;

function declarationFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return declarationFiles(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

// A removed module must not linger in the package.
rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const build = spawnSync(process.execPath, [tsc, '-p', join(PACKAGE, 'tsconfig.build.json')], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// tsc rewrites the sources' `.ts` specifiers to `.js` in the JavaScript it emits, not in declarations. TypeScript
// reads either, but editors and older compilers expect the `.js` that sits beside each declaration.
for (const path of declarationFiles(DIST)) {
  const text = readFileSync(path, 'utf8');
  const rewritten = text.replace(TS_SPECIFIER, '$1$2.js$3');
  if (rewritten !== text) writeFileSync(path, rewritten);
}
console.log(`built ${DIST}`);
