import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

/**
 * Folder-level import cycles, computed from the import statements of src/. Within each folder, its
 * own files and its subfolders are the parts (a subfolder, with everything below it, is one part); an
 * import from a file of one part to a file of another is a dependency between the parts. A
 * folder-level cycle is a set of parts that depend on one another in a circle, with a subfolder among
 * them: the subfolder uses something beside it that uses the subfolder back. A folder's files may use
 * its subfolders (app.ts registers the plugins of http/plugins/), and a subfolder may use the files
 * beside it (the plugins send errors with http/error-body.ts), but not both ways round.
 */

const SRC = join(import.meta.dirname, '..', 'src');

/** A source file, by its path under src/ with `/` between folders, and the files under src/ it imports. */
interface SourceFile {
  readonly path: string;
  readonly imports: readonly string[];
}

/** A folder-level cycle: the folder, its parts in the cycle, and the imports that close it. */
interface FolderCycle {
  readonly folder: string;
  readonly parts: readonly string[];
  readonly imports: readonly string[];
}

function sourceFiles(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(ts|js)$/.test(entry.name) || entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const imported = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
    const imports = imported
      .map((reference) => reference.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => underRoot(root, resolve(dirname(file), specifier)))
      .filter((path) => !path.startsWith('../'));
    files.push({ path: underRoot(root, file), imports });
  }
  return files;
}

function underRoot(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

function foldersOf(files: readonly SourceFile[]): string[] {
  const folders = new Set<string>();
  for (const { path } of files) {
    const segments = path.split('/');
    for (let depth = 0; depth < segments.length; depth += 1) folders.add(segments.slice(0, depth).join('/'));
  }
  return [...folders].sort();
}

/** The part of `folder` a file belongs to: one of its own files, or `name/` for a subfolder; undefined outside it. */
function partOf(folder: string, path: string): string | undefined {
  const prefix = folder === '' ? '' : `${folder}/`;
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? rest : rest.slice(0, slash + 1);
}

function folderCycles(files: readonly SourceFile[]): FolderCycle[] {
  const cycles: FolderCycle[] = [];
  for (const folder of foldersOf(files)) {
    const edges = new Map<string, Map<string, string[]>>();
    for (const file of files) {
      const from = partOf(folder, file.path);
      if (from === undefined) continue;
      for (const target of file.imports) {
        const to = partOf(folder, target);
        if (to === undefined || to === from) continue;
        const targets = edges.get(from) ?? new Map<string, string[]>();
        targets.set(to, [...(targets.get(to) ?? []), `${file.path} → ${target}`]);
        edges.set(from, targets);
      }
    }
    for (const parts of stronglyConnected(edges)) {
      if (parts.length < 2 || !parts.some((part) => part.endsWith('/'))) continue;
      const imports = parts.flatMap((from) =>
        [...(edges.get(from) ?? [])].filter(([to]) => parts.includes(to)).flatMap(([, lines]) => lines),
      );
      cycles.push({ folder: folder === '' ? '.' : folder, parts: parts.sort(), imports: imports.sort() });
    }
  }
  return cycles;
}

/** Tarjan's strongly connected components of a graph given as its edges. */
function stronglyConnected(edges: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    lowest.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of (edges.get(node) ?? new Map<string, unknown>()).keys()) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(node, Math.min(lowest.get(node) as number, lowest.get(next) as number));
      } else if (stack.includes(next)) {
        lowest.set(node, Math.min(lowest.get(node) as number, index.get(next) as number));
      }
    }
    if (lowest.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      component.push(member);
    } while (member !== node);
    components.push(component);
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

function describeCycles(cycles: readonly FolderCycle[]): string {
  return cycles
    .map(({ folder, parts, imports }) => `in src/${folder}: ${parts.join(' ⇄ ')}\n    ${imports.join('\n    ')}`)
    .join('\n  ');
}

describe('folder-level import cycles', () => {
  const cycles = folderCycles(sourceFiles(SRC));

  it('src/http has none: its plugins, routes and the files beside them use one another one way only', () => {
    const inHttp = cycles.filter(({ folder }) => folder === 'http' || folder.startsWith('http/'));
    assert.deepEqual(inHttp, [], `folder-level import cycles:\n  ${describeCycles(inHttp)}`);
  });

  it('src/ has none: the admin API’s routes and its document live in one folder, admin/', () => {
    assert.deepEqual(cycles, [], `folder-level import cycles:\n  ${describeCycles(cycles)}`);
  });

  it('finds a cycle between a subfolder and a file beside it, and none among one folder’s own files', () => {
    const found = folderCycles([
      { path: 'http/app.ts', imports: ['http/plugins/a.ts'] },
      { path: 'http/openapi.ts', imports: ['http/plugins/b.ts'] },
      { path: 'http/plugins/a.ts', imports: ['http/openapi.ts', 'http/error-body.ts'] },
      { path: 'http/plugins/b.ts', imports: [] },
      { path: 'http/error-body.ts', imports: [] },
      { path: 'cli/one.ts', imports: ['cli/two.ts'] },
      { path: 'cli/two.ts', imports: ['cli/one.ts'] },
    ]);
    assert.deepEqual(found, [
      {
        folder: 'http',
        parts: ['openapi.ts', 'plugins/'],
        imports: ['http/openapi.ts → http/plugins/b.ts', 'http/plugins/a.ts → http/openapi.ts'],
      },
    ]);
  });
});
