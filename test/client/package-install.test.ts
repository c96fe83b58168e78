import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import { startTestApp, type TestApp } from '../support/test-app.ts';

/**
 * @petstore/client as someone outside the repository gets it: packed and installed into a fresh project by the
 * commands of client/README.md's Install section, as written (`npm pack` in client/, whose prepack builds dist/;
 * `npm install` of the tarball by the name the README gives, offline), compiled there by a strict tsc, and run by a
 * Node older than 24 (which strips no types) against the real app. With no such Node it is skipped with the reason,
 * unless CI=true: then it fails.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'client', 'package.json'), 'utf8')) as { version: string };

/** The placeholders of the README's commands, which a reader replaces with their own paths. */
const PROJECT_PLACEHOLDER = '/your/project';
const TARBALL_PLACEHOLDER = '/path/to/';

/** The commands of the Install section's shell block of client/README.md, in order, without their comments. */
function readmeInstallCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'client', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Install\n'));
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block !== undefined, 'client/README.md has an Install section with a sh block');
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
}

interface OlderNode {
  readonly path: string;
  readonly version: string;
}

/** /usr/bin/node, or the first `node` on PATH outside node_modules/.bin, when its major version is below 24. */
function olderNode(): OlderNode | undefined {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((directory) => directory !== '' && !directory.includes(`node_modules${sep}.bin`))
    .map((directory) => join(directory, 'node'));
  for (const path of new Set(['/usr/bin/node', ...onPath])) {
    if (!existsSync(path)) continue;
    try {
      const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
      if (Number(/^v(\d+)\./.exec(version)?.[1]) < 24) return { path, version };
    } catch {
      // Not a working node: try the next one.
    }
  }
  return undefined;
}

const OLDER_NODE = olderNode();
const missing =
  OLDER_NODE === undefined ? 'no Node older than 24 (/usr/bin/node or on PATH) to run the package' : undefined;
if (missing !== undefined && process.env.CI === 'true') throw new Error(`${missing}; CI=true, so this fails`);

/** The environment of a nested npm: none of the npm_* settings of an `npm test` around this file. */
function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...env, ...extra };
}

async function run(command: string, args: string[], cwd: string, env = cleanEnvironment()): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      reject(new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: error }));
    });
  });
}

// What a Node program of a consumer does, compiled with their strict settings. The `@ts-expect-error` lines hold the
// types to what they must be: the compilation fails when a type becomes wider or narrower than it should.
const NODE_PROGRAM = `
import {
  CLIENT_VERSION,
  int64Replacer,
  PetstoreClient,
  PetstoreError,
  PetstoreTimeoutError,
  type CreatedKey,
  type Int64,
  type Key,
  type KeyCreateError,
  type Pet,
  type PetPage,
  type PetstoreClientOptions,
  type PetstoreResponse,
  type WaitInfo,
} from '@petstore/client';

const baseUrl = process.env.PETSTORE_URL;
const apiKey = process.env.PETSTORE_API_KEY;
const smallKey = process.env.PETSTORE_SMALL_KEY;
const managerKey = process.env.PETSTORE_MANAGER_KEY;
if (baseUrl === undefined || apiKey === undefined || smallKey === undefined || managerKey === undefined) {
  throw new Error('set PETSTORE_URL, PETSTORE_API_KEY, PETSTORE_SMALL_KEY and PETSTORE_MANAGER_KEY');
}

const waits: WaitInfo[] = [];
const options: PetstoreClientOptions = {
  baseUrl,
  apiKey,
  timeoutMs: 10_000,
  userAgent: 'package-test/1.0',
  requestId: undefined,
  etagCache: { maxEntries: 100 },
  onRateLimit: (info) => {
    waits.push(info);
  },
};
const client = new PetstoreClient(options);

const created: Pet = await client.pets.create({ name: 'Big', categoryId: 9007199254740993n, status: 'available' });
// int64s: a number while safe, a bigint beyond 2^53.
const id: Int64 = created.id;
const categoryId: number | bigint = created.categoryId;
// @ts-expect-error an id may be a bigint
const idAsNumber: number = created.id;
// @ts-expect-error a categoryId may be a bigint
const categoryIdAsNumber: number = created.categoryId;

// Results with the metadata of their answers.
const small: PetstoreResponse<Pet> = await client.withResponse.pets.create(
  { name: 'Small', categoryId: 7 },
  { requestId: 'package-test-create' },
);
const metadata = {
  status: small.status,
  requestId: small.requestId,
  limit: small.rateLimit?.limit,
  location: small.headers.get('location') === '/v1/pets/' + String(small.data.id),
};

// A full page and a pet asked for again with their kept ETags: 304, and the kept body.
const firstPage: PetstoreResponse<PetPage> = await client.withResponse.pets.listPage({ limit: 1 });
const keptPage = await client.withResponse.pets.listPage({ limit: 1 });
const written = (value: unknown): string => JSON.stringify(value, int64Replacer);
const pageEtag = {
  statuses: [firstPage.status, keptPage.status],
  same: written(firstPage.data) === written(keptPage.data),
};
const firstGet = await client.withResponse.pets.get(id);
const keptGet = await client.withResponse.pets.get(id);
const petEtag = { statuses: [firstGet.status, keptGet.status], same: written(firstGet.data) === written(created) };

// The deprecated call, and its replacement: GET /v1/pets with the status filter.
const got: Pet = await client.pets.get(id);
const available: Pet[] = [];
for await (const pet of client.pets.list({ status: 'available' })) available.push(pet);
const listed: Pet[] = [];
for await (const pet of client.pets.list({ limit: 1, status: undefined })) listed.push(pet);
const page = await client.pets.listPage({ limit: 1, cursor: undefined, signal: undefined });
const usage = await client.usage({ requestId: 'package-test-usage' });

let notFound: { status: number; code: string; requestId: string | undefined } | undefined;
try {
  await client.pets.get(BigInt(id) + 1000n, { requestId: 'package-test-get' });
} catch (error) {
  if (!(error instanceof PetstoreError)) throw error;
  notFound = { status: error.status, code: error.code, requestId: error.requestId };
}

// Errors narrow by code: a rate_limited one always says how long to wait.
function waitMs(error: PetstoreError<'rate_limited'>): number {
  return error.retryAfter * 1000;
}

// A spent window that resets later than the call's timeoutMs allows: thrown at once, nothing sent.
let sent = 0;
const limited = new PetstoreClient({
  baseUrl,
  apiKey: smallKey,
  fetch: (input, init) => {
    sent += 1;
    return fetch(input, init);
  },
});
await limited.pets.listPage();
await limited.pets.listPage();
const sentBefore = sent;
let paced: { code: string; retryAfter: number; waitMs: number; message: string; sent: number } | undefined;
try {
  await limited.pets.listPage({ timeoutMs: 30_000 });
} catch (error) {
  if (error instanceof PetstoreTimeoutError) throw new Error(\`waited until the timeout of \${error.timeoutMs} ms\`);
  if (!(error instanceof PetstoreError)) throw error;
  if (error.code === 'rate_limited') {
    const retryAfter: number = error.retryAfter;
    paced = { code: error.code, retryAfter, waitMs: waitMs(error), message: error.message, sent: sent - sentBefore };
  }
  // @ts-expect-error without the check of its code, an error may have no retryAfter
  const anyRetryAfter: number = error.retryAfter;
}

// The account's keys, with a key that holds keys:manage (and pets:read).
const manager = new PetstoreClient({ baseUrl, apiKey: managerKey });
const minted: CreatedKey = await manager.keys.create({ name: 'package', scopes: ['pets:read'] });
const rolledKey: CreatedKey = await manager.keys.roll(minted.id, { gracePeriodSeconds: 60 });
const revokedKey: Key = await manager.keys.revoke(minted.id);
const keyIds: string[] = [];
for await (const listedKey of manager.keys.list({ limit: 1 })) keyIds.push(listedKey.id);
let escalation: string | undefined;
try {
  await manager.keys.create({ name: 'writer', scopes: ['pets:write'] });
} catch (error) {
  if (!(error instanceof PetstoreError)) throw error;
  if (error.code === 'insufficient_scope' || error.code === 'key_limit') {
    const narrowed: KeyCreateError = error;
    escalation = narrowed.code;
  }
}
// @ts-expect-error a listed key has no secret
const secretOfListed: string = revokedKey.key;
// @ts-expect-error a scope is one the service knows
await manager.keys.create({ name: 'typo', scopes: ['pets:reed'] }).catch(() => undefined);

const report = {
  node: process.version,
  version: CLIENT_VERSION,
  idType: typeof created.id,
  categoryIdType: typeof created.categoryId,
  created,
  got,
  metadata,
  pageEtag,
  petEtag,
  replacementFinds: available.some((pet) => pet.id === id),
  listed,
  pageSize: page.pets.length,
  minute: usage.windows.minute,
  notFound,
  paced,
  waits: waits.length,
  keys: {
    minted: minted.key.startsWith('pst_'),
    rolled: [rolledKey.name, rolledKey.scopes],
    revokedBy: revokedKey.revokedBy,
    listed: keyIds.length,
    escalation,
  },
};
console.log(JSON.stringify(report, int64Replacer));
`;

// A browser module of a consumer: DOM types only, no Node types.
const BROWSER_PROGRAM = `
import { PetstoreClient, PetstoreError, PetstoreTimeoutError, type WaitInfo } from '@petstore/client';

export function petstoreFor(apiKey: string, onWait: (info: WaitInfo) => void): PetstoreClient {
  const baseUrl = new URL('/v1', location.href).href;
  return new PetstoreClient({ baseUrl, apiKey, onRetry: onWait, timeoutMs: 5000, etagCache: true });
}

export function isTimeout(error: unknown): boolean {
  return error instanceof PetstoreTimeoutError;
}

export function secondsToWait(error: unknown): number | undefined {
  return error instanceof PetstoreError && error.code === 'rate_limited' ? error.retryAfter : undefined;
}
`;

function tsconfig(file: string, options: Record<string, unknown>): string {
  const compilerOptions = {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    ...options,
  };
  return JSON.stringify({ compilerOptions, files: [file] }, null, 2);
}

interface WrittenPet {
  readonly id: number;
  readonly categoryId: unknown;
}

interface Report {
  readonly node: string;
  readonly version: string;
  readonly idType: string;
  readonly categoryIdType: string;
  readonly created: WrittenPet;
  readonly got: WrittenPet;
  readonly metadata: unknown;
  readonly pageEtag: unknown;
  readonly petEtag: unknown;
  readonly replacementFinds: boolean;
  readonly listed: readonly WrittenPet[];
  readonly pageSize: number;
  readonly minute: { readonly limit: number; readonly remaining: number };
  readonly notFound: { readonly status: number; readonly code: string; readonly requestId: string };
  readonly paced: {
    readonly code: string;
    readonly retryAfter: number;
    readonly waitMs: number;
    readonly message: string;
    readonly sent: number;
  };
  readonly waits: number;
  readonly keys: unknown;
}

/** The text of the `@deprecated` tag of a method of a class, in a declaration file; undefined without one. */
function deprecationOf(path: string, className: string, methodName: string): string | undefined {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  for (const statement of file.statements) {
    if (!ts.isClassDeclaration(statement) || statement.name?.text !== className) continue;
    const method = statement.members.find(
      (member) => ts.isMethodDeclaration(member) && ts.isIdentifier(member.name) && member.name.text === methodName,
    );
    const tag = method === undefined ? undefined : ts.getJSDocDeprecatedTag(method);
    return tag === undefined ? undefined : (ts.getTextOfJSDocComment(tag.comment) ?? '');
  }
  return undefined;
}

describe('client: the packed package in a project of its own', { skip: missing }, () => {
  let app: TestApp;
  let work: string;
  /** The tarballs the README's `npm pack` wrote into client/ (git ignores them), removed once done. */
  let packed: readonly string[] = [];

  before(async () => {
    app = await startTestApp();
    work = mkdtempSync(join(tmpdir(), 'petstore-client-package-'));
  });
  after(async () => {
    await app?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    for (const name of packed) rmSync(join(ROOT, 'client', name), { force: true });
  });

  it("packs and installs by the README's commands, compiles under strict settings, runs on an older Node", async () => {
    const [pack, install = '', ...more] = readmeInstallCommands();
    assert.deepEqual(more, [], 'two commands: pack, then install');
    assert.equal(pack, 'cd client && npm pack');
    const tarball = /\/(petstore-client-[^/\s]+\.tgz)$/.exec(install)?.[1];
    assert.ok(
      install.startsWith(`cd ${PROJECT_PLACEHOLDER} && npm install ${TARBALL_PLACEHOLDER}`) && tarball !== undefined,
      `the install command names the tarball: ${install}`,
    );
    // From the checkout's root, as the README has the reader run it: the tarball is written into client/.
    const clientDirectory = join(ROOT, 'client');
    const there = new Set(readdirSync(clientDirectory));
    await run('bash', ['-euo', 'pipefail', '-c', pack], ROOT);
    packed = readdirSync(clientDirectory).filter((name) => name.endsWith('.tgz') && !there.has(name));
    assert.deepEqual(
      packed,
      [tarball],
      `npm pack wrote the tarball the README names (the version is ${MANIFEST.version})`,
    );

    const project = join(work, 'consumer');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // The reader's paths for the placeholders; offline, the package having no dependencies to fetch.
    const installHere = install.replace(PROJECT_PLACEHOLDER, project).replace(TARBALL_PLACEHOLDER, `${ROOT}/client/`);
    const offline = cleanEnvironment({
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    });
    await run('bash', ['-euo', 'pipefail', '-c', installHere], work, offline);
    const installed = join(project, 'node_modules', '@petstore', 'client');
    assert.deepEqual(readdirSync(installed).sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'package.json']);

    writeFileSync(join(project, 'src', 'main.ts'), NODE_PROGRAM);
    writeFileSync(join(project, 'src', 'browser.ts'), BROWSER_PROGRAM);
    const nodeTypes = { lib: ['es2022'], types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] };
    writeFileSync(join(project, 'tsconfig.json'), tsconfig('src/main.ts', { ...nodeTypes, outDir: 'dist' }));
    const browserTypes = { lib: ['es2022', 'dom', 'dom.iterable'], types: [], noEmit: true };
    writeFileSync(join(project, 'tsconfig.browser.json'), tsconfig('src/browser.ts', browserTypes));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], project);
    await run(process.execPath, [TSC, '-p', 'tsconfig.browser.json'], project);

    for (const className of ['PetsApi', 'PetsWithResponseApi']) {
      const deprecation = deprecationOf(join(installed, 'dist', 'pets-api.d.ts'), className, 'get');
      assert.match(
        deprecation ?? '',
        /GET \/v1\/pets` with the `status` filter: `client\.(withResponse\.)?pets\.list\(/,
      );
    }

    const { key } = await app.newKey({ plan: 'pro' });
    const { key: smallKey } = await app.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const manager = await app.newKey({ scopes: ['pets:read', 'keys:manage'] });
    const env = cleanEnvironment({
      PETSTORE_URL: `${app.url}/v1`,
      PETSTORE_API_KEY: key,
      PETSTORE_SMALL_KEY: smallKey,
      PETSTORE_MANAGER_KEY: manager.key,
    });
    const output = await run(OLDER_NODE?.path ?? 'node', [join('dist', 'main.js')], project, env);
    const report = JSON.parse(output) as Report;

    assert.equal(report.node, OLDER_NODE?.version);
    assert.equal(report.version, MANIFEST.version);
    assert.equal(report.idType, 'number', 'an id far below 2^53');
    assert.equal(report.categoryIdType, 'bigint', 'read back beyond 2^53 as a bigint');
    assert.equal(report.created.categoryId, '9007199254740993', 'every digit, written by int64Replacer');
    const listed = report.listed.find((pet) => pet.id === report.created.id);
    assert.equal(listed?.categoryId, '9007199254740993');
    assert.equal(report.pageSize, 1);
    assert.equal(report.minute.limit, 300);
    assert.ok(report.minute.remaining < 300, `spent some of the minute: ${report.minute.remaining} left`);
    assert.deepEqual(report.got, report.created);
    assert.deepEqual(report.metadata, {
      status: 201,
      requestId: 'package-test-create',
      limit: 300,
      location: true,
    });
    assert.deepEqual(report.pageEtag, { statuses: [200, 304], same: true });
    assert.deepEqual(report.petEtag, { statuses: [200, 304], same: true });
    assert.equal(report.replacementFinds, true);
    assert.deepEqual(report.notFound, { status: 404, code: 'not_found', requestId: 'package-test-get' });
    const { message, ...paced } = report.paced;
    assert.deepEqual(paced, { code: 'rate_limited', retryAfter: 60, waitMs: 60_000, sent: 0 });
    assert.match(message, /^not sent: .* longer than the \d+ ms left of timeoutMs \(30000 ms\)$/);
    assert.equal(report.waits, 0);
    assert.deepEqual(report.keys, {
      minted: true,
      rolled: ['package', ['pets:read']],
      revokedBy: { kind: 'key', id: manager.keyId },
      listed: 3,
      escalation: 'insufficient_scope',
    });
  });
});
