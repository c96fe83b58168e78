import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/**
 * A version the documents write is a claim about the package files: README.md, docs/*.md and client/README.md write
 * a version of the service, of the client or of the pinned Node only where it is the one its package.json gives, and
 * any other x.y.z only where it is an earlier release of the service (its changelog's) or a version of software this
 * repository does not make, listed below. A version left behind by a release fails here, naming the file and line.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
  'client/README.md',
];

/** x.y.z, with a `v` or a pre-release part; not a piece of an address (127.0.0.1) or a section (RFC 9110 §15.6.2). */
const VERSION = /(?<![\d.§])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.+]+)?)(?!\.?\d)/g;

/**
 * Versions of other software, as docs/operations.md writes them: the PgBouncer of Debian 12 and the release that
 * fixes it (PgBouncer), and the Redis a benchmark ran against. None comes from this repository's package files.
 */
const OTHER_SOFTWARE: Readonly<Record<string, readonly string[]>> = {
  PgBouncer: ['1.18.0', '1.18.0-1+deb12u1', '1.19.1'],
  Redis: ['7.0.15'],
};

interface Manifest {
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

function manifest(path: string): Manifest {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Manifest;
}

/** The released versions of a changelog: its `## [x.y.z] - date` headings. */
function releases(path: string): Set<string> {
  const text = readFileSync(join(ROOT, path), 'utf8');
  return new Set(
    [...text.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map((match) => match[1] as string),
  );
}

const SERVICE = manifest('package.json');
const CLIENT = manifest('client/package.json');
const NODE = SERVICE.dependencies?.node;
const SERVICE_RELEASES = releases('CHANGELOG.md');

/** What names a version, by the text right before it, and the one version its package file gives. */
const NAMED: ReadonlyArray<{ readonly what: string; readonly before: RegExp; readonly version: string | undefined }> = [
  // The tarball (petstore-client-2.1.0.tgz), the User-Agent (petstore-client/2.1.0), an npm spec.
  {
    what: 'the client (client/package.json)',
    before: /(?:petstore-client[-/]|@petstore\/client@)$/,
    version: CLIENT.version,
  },
  // `petstore 1.3.0`, as --version prints it, and its JSON form.
  {
    what: 'the service (package.json)',
    before: /(?:\bpetstore |"name":"petstore","version":")$/,
    version: SERVICE.version,
  },
  { what: "the pinned Node (package.json's dependency node)", before: /\bNode v?$/, version: NODE },
];

interface Found {
  readonly file: string;
  readonly line: number;
  readonly version: string;
  /** What it is taken to be, or why it is wrong. */
  readonly verdict: string;
  readonly ok: boolean;
}

function judge(file: string, line: number, text: string, index: number, version: string): Found {
  const before = text.slice(0, index);
  const named = NAMED.find((rule) => rule.before.test(before));
  if (named !== undefined) {
    const ok = named.version === version;
    return { file, line, version, ok, verdict: ok ? named.what : `${named.what} is ${named.version}` };
  }
  const other = Object.entries(OTHER_SOFTWARE).find(([, versions]) => versions.includes(version));
  if (other !== undefined) return { file, line, version, ok: true, verdict: other[0] };
  if (SERVICE_RELEASES.has(version)) return { file, line, version, ok: true, verdict: 'a release of the service' };
  return {
    file,
    line,
    version,
    ok: false,
    verdict:
      'no version the package files give: not the client, the service or the pinned Node where it names one, ' +
      'nor a release in CHANGELOG.md',
  };
}

function versionsIn(file: string): Found[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  return lines.flatMap((text, index) =>
    [...text.matchAll(VERSION)].map((match) =>
      judge(file, index + 1, text, match.index + match[0].length - (match[1] as string).length, match[1] as string),
    ),
  );
}

describe('the versions the documents write', () => {
  const found = FILES.flatMap(versionsIn);

  it('are each the version a package file gives, an earlier release, or another program of the list', () => {
    const wrong = found
      .filter((claim) => !claim.ok)
      .map((claim) => `${claim.file}:${claim.line}: ${claim.version}, ${claim.verdict}`);
    assert.deepEqual(wrong, []);
  });

  it('are found where the documents name the client, the service and Node', () => {
    // The search itself is held to what it must find, so that a pattern that finds nothing cannot pass.
    const where = (what: string): string[] =>
      found.filter((claim) => claim.verdict === what).map((claim) => `${claim.file}:${claim.line}`);
    const client = where('the client (client/package.json)');
    assert.ok(
      client.filter((at) => at.startsWith('client/README.md')).length >= 3,
      `the client's: ${client.join(', ')}`,
    );
    assert.ok(
      client.some((at) => at.startsWith('README.md')),
      `the client's: ${client.join(', ')}`,
    );
    assert.ok(where('the service (package.json)').length >= 2, 'the service version --version prints');
    assert.ok(NODE !== undefined && where("the pinned Node (package.json's dependency node)").length >= 1);
  });

  it('tell a stale version from the current one', () => {
    const line = 'cd client && npm pack   # writes petstore-client-2.0.0.tgz; User-Agent: petstore-client/9.9.9';
    const stale = [...line.matchAll(VERSION)].map((match) =>
      judge('a README', 1, line, match.index + match[0].length - (match[1] as string).length, match[1] as string),
    );
    assert.deepEqual(
      stale.map((claim) => [claim.version, claim.ok]),
      [
        ['2.0.0', CLIENT.version === '2.0.0'],
        ['9.9.9', false],
      ],
    );
    const addresses = 'http://127.0.0.1:9464, TRUST_PROXY=10.0.0.0/8, RFC 9110 §15.6.2';
    assert.deepEqual([...addresses.matchAll(VERSION)], [], 'addresses and sections are not versions');
  });
});
