import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The checkout's package.json, found from this file rather than the working directory. */
const MANIFEST = join(import.meta.dirname, '..', 'package.json');

let version: string | undefined;

/** The petstore version: the `version` of the root package.json, read on first use. */
export function petstoreVersion(): string {
  version ??= readVersion();
  return version;
}

function readVersion(): string {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the version from ${MANIFEST}: ${messageOf(error)}`, { cause: error });
  }
  // The name proves it is petstore's own manifest, not one that happens to lie two folders up.
  if (!isRecord(manifest) || manifest.name !== 'petstore')
    throw new Error(`cannot read the version: ${MANIFEST} is not petstore's package.json`);
  if (typeof manifest.version !== 'string' || manifest.version === '')
    throw new Error(`cannot read the version: ${MANIFEST} has no "version"`);
  return manifest.version;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
