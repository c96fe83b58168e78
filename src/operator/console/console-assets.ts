import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Representation } from '../../net/representation.ts';

/**
 * A file the console serves as is, read once at start-up. Its bytes are a kept Representation, so
 * the HTTP core's response hook gives them their ETag (a digest of the bytes, the same on every
 * instance and after every restart), their 304s and their compressed forms.
 */
export interface ConsoleAsset {
  readonly representation: Representation;
  readonly contentType: string;
  /** The digest of the ETag, for `?v=` on the page's links, so that a release is never mixed with a cached copy. */
  readonly version: string;
}

const JAVASCRIPT = 'application/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

function asset(bytes: Buffer, contentType: string): ConsoleAsset {
  const representation = new Representation(bytes);
  return { representation, contentType, version: representation.digest };
}

function own(name: string, contentType: string): ConsoleAsset {
  return asset(readFileSync(new URL(`./${name}`, import.meta.url)), contentType);
}

/** A file of the uplot package, found where Node's resolution finds it (node_modules, hoisted or not). */
function fromUplot(path: string, contentType: string): ConsoleAsset {
  return asset(readFileSync(fileURLToPath(import.meta.resolve(`uplot/${path}`))), contentType);
}

/**
 * The console's script: the ES modules under modules/ (the entry, console.js, imports the others by
 * relative paths). They are served under one path that names their release, a digest of every
 * module's path and bytes, so that their relative imports stay within it: a page never runs a module
 * of one release with a module of another, and a new release is fetched at once, past any cache.
 */
export interface ConsoleModules {
  readonly release: string;
  /** By their path under modules/, with `/` between folders: `console.js`, `core/dom.js`, `pages/audit.js`. */
  readonly files: ReadonlyMap<string, ConsoleAsset>;
}

/** The module each page's shell loads. */
export const CONSOLE_ENTRY_MODULE = 'console.js';

const MODULES = new URL('./modules/', import.meta.url);

function loadModules(): ConsoleModules {
  const paths = readdirSync(MODULES, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.js'))
    .sort();
  const files = new Map(paths.map((path) => [path, asset(readFileSync(new URL(path, MODULES)), JAVASCRIPT)]));
  if (!files.has(CONSOLE_ENTRY_MODULE)) throw new Error(`the console has no ${CONSOLE_ENTRY_MODULE}`);
  const listing = [...files].map(([path, file]) => `${path} ${file.version}\n`).join('');
  // A digest as the ETags have, of the listing: any module changed, added or taken away changes it.
  return { release: new Representation(listing).digest, files };
}

/** Where a module is served: under /console/assets/modules/, in its release's folder. */
export function consoleModulePath(modules: ConsoleModules, path: string): string {
  return `/console/assets/modules/${modules.release}/${path}`;
}

/**
 * The console's files: the pages' styles and uPlot by their name under /console/assets/, the
 * modules, and the login page's files by their name under /console/login/assets/.
 */
export interface ConsoleAssets {
  readonly page: Readonly<Record<'console.css' | 'uplot.js' | 'uplot.css', ConsoleAsset>>;
  readonly modules: ConsoleModules;
  readonly login: Readonly<Record<'login.js' | 'console.css', ConsoleAsset>>;
}

export function loadConsoleAssets(): ConsoleAssets {
  const css = own('console.css', CSS);
  return {
    page: {
      'console.css': css,
      // The self-contained build: it defines the global uPlot that the console's charts draw with.
      'uplot.js': fromUplot('dist/uPlot.iife.min.js', JAVASCRIPT),
      'uplot.css': fromUplot('dist/uPlot.min.css', CSS),
    },
    modules: loadModules(),
    login: { 'login.js': own('login.js', JAVASCRIPT), 'console.css': css },
  };
}
