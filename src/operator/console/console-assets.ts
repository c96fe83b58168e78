import { readFileSync } from 'node:fs';
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

/** The console's files, by their name under /console/assets/ (and /console/login/assets/ for the login page's). */
export interface ConsoleAssets {
  readonly page: Readonly<Record<'console.js' | 'console.css' | 'uplot.js' | 'uplot.css', ConsoleAsset>>;
  readonly login: Readonly<Record<'login.js' | 'console.css', ConsoleAsset>>;
}

export function loadConsoleAssets(): ConsoleAssets {
  const css = own('console.css', CSS);
  return {
    page: {
      'console.js': own('console.js', JAVASCRIPT),
      'console.css': css,
      // The self-contained build: it defines the global uPlot that console.js draws with.
      'uplot.js': fromUplot('dist/uPlot.iife.min.js', JAVASCRIPT),
      'uplot.css': fromUplot('dist/uPlot.min.css', CSS),
    },
    login: { 'login.js': own('login.js', JAVASCRIPT), 'console.css': css },
  };
}
