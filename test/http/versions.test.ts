import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_VERSION } from '../../client/src/version.ts';
import { publicDocument } from '../../src/http/public-document.ts';
import { ADMIN_DOCUMENT } from '../../src/operator/admin/admin-openapi.ts';
import { petstoreVersion } from '../../src/version.ts';

/** Every place a version is written agrees with its package's manifest and its changelog's latest release. */
const ROOT = join(import.meta.dirname, '..', '..');

function manifestVersion(path: string): string {
  return (JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { version: string }).version;
}

/** The newest released section of a changelog: `## [x.y.z] - date`, below `[Unreleased]`. */
function latestRelease(path: string): string {
  const match = /^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/m.exec(readFileSync(join(ROOT, path), 'utf8'));
  assert.ok(match, `${path} has a released section`);
  return match[1] as string;
}

describe('versions', () => {
  it('the service: package.json, --version, both documents and the changelog say one version', () => {
    const version = manifestVersion('package.json');
    assert.equal(petstoreVersion(), version);
    assert.equal(publicDocument('').fields.info?.version, version);
    assert.equal(ADMIN_DOCUMENT.fields.info?.version, version);
    assert.equal(latestRelease('CHANGELOG.md'), version);
  });

  it('the client: its package.json, CLIENT_VERSION (its User-Agent) and its changelog say one version', () => {
    const version = manifestVersion('client/package.json');
    assert.equal(CLIENT_VERSION, version);
    assert.equal(latestRelease('client/CHANGELOG.md'), version);
  });
});
