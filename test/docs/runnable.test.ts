import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCliLaunched, type CliResult } from '../support/cli-runner.ts';
import { request } from '../support/http-client.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

/**
 * The shell blocks the READMEs mark as runnable, run as a reader runs them: a command shown to users is a command
 * this test has run. The marker is an HTML comment, which GitHub does not show, before the block's fence:
 *
 *   <!-- runnable: NAME -->
 *
 *   ```sh
 *
 * Each block runs with `bash -euo pipefail` from the checkout's root, in document order, against one real server
 * (src/server.ts on an ephemeral port over a fresh SQLite file: an empty store, so it prints the demo key, as
 * `npm start` does). Its environment holds only what the README has the reader set, PETSTORE_URL (the server's
 * `/v1`) and PETSTORE_API_KEY (the demo key), the server's DATABASE_URL (which the CLI shares), HOME, and the PATH
 * of the reader's shell: this one's without the node_modules/.bin that npm puts first, so a block that needs the
 * pinned Node 24 must show how it gets it.
 *
 * CHECKS says what each block's output must show. The test fails when a block exits non-zero or its output does
 * not show that, when a marker has no check or a check no marker (so a marker cannot silently vanish), and when
 * a file has no marker at all.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = ['README.md', 'client/README.md'] as const;
const MARKER = /^<!-- runnable: ([a-z0-9-]+) -->$/;
const ANY_MARKER = /<!--\s*runnable/;
const SHELL_FENCE = /^```(?:sh|bash)(?:\s|$)/;
const KEY = /pst_[0-9A-Za-z]{36}/;

interface RunnableBlock {
  readonly file: string;
  /** The line of its opening fence, counted from 1. */
  readonly line: number;
  readonly name: string;
  readonly script: string;
}

interface MarkedFile {
  readonly file: string;
  readonly blocks: readonly RunnableBlock[];
  /** Markers that are malformed or mark no shell block. */
  readonly problems: readonly string[];
}

function markedBlocks(file: string): MarkedFile {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: RunnableBlock[] = [];
  const problems: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (!ANY_MARKER.test(line)) continue;
    const name = MARKER.exec(line)?.[1];
    if (name === undefined) {
      problems.push(`${file}:${index + 1}: a malformed marker (want <!-- runnable: NAME -->): ${line}`);
      continue;
    }
    let open = index + 1;
    while (lines[open]?.trim() === '') open += 1;
    const close = lines.indexOf('```', open + 1);
    if (!SHELL_FENCE.test(lines[open] ?? '') || close === -1) {
      problems.push(`${file}:${index + 1}: the marker "${name}" is not followed by a whole sh block`);
      continue;
    }
    blocks.push({ file, line: open + 1, name, script: lines.slice(open + 1, close).join('\n') });
  }
  return { file, blocks, problems };
}

type Check = (result: CliResult, server: ServerProcess) => void | Promise<void>;

/** What examples/list-and-create.ts prints when it has done its work. */
function assertExampleRan(stdout: string): void {
  assert.match(stdout, /^created \{"id":\d+,"name":"Rex","categoryId":"9007199254740993","status":"available"\}$/m);
  assert.match(stdout, /^\d+ available pets; rate limit now/m);
  assert.match(stdout, /^usage \{\n {2}account: \{ name: 'demo', plan: 'free' \}/m);
}

const CHECKS: Readonly<Record<string, Check>> = {
  // Two curl calls, their bodies back to back: the list, then the pet created.
  'list-and-add': ({ stdout }) => {
    const created = /\{[^{}]*\}$/.exec(stdout);
    assert.ok(created, `the created pet ends the output: ${stdout}`);
    assert.ok(Array.isArray(JSON.parse(stdout.slice(0, created.index))), `the first call lists pets: ${stdout}`);
    const pet = JSON.parse(created[0]) as { id: unknown };
    assert.ok(Number.isSafeInteger(pet.id), created[0]);
    assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 7, status: 'available' });
  },
  'cli-key': async ({ stdout }, server) => {
    const key = stdout.trimEnd().split('\n').at(-1) ?? '';
    assert.match(key, new RegExp(`^${KEY.source}$`), `the key alone on the last line: ${stdout}`);
    const usage = await request(server, '/v1/usage', { key });
    assert.equal(usage.status, 200, usage.text);
    assert.deepEqual(usage.json<{ account: unknown }>().account, { name: 'acme', plan: 'pro' }, 'the server takes it');
  },
  example: ({ stdout }) => assertExampleRan(stdout),
  // Its test file's failures already fail the block (exit status); the example is what needs the server.
  'client-source': ({ stdout }) => assertExampleRan(stdout),
};

/** The PATH of a shell outside npm: npm puts node_modules/.bin, with the pinned Node 24, first for its scripts. */
function readerPath(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((directory) => directory !== '' && !directory.includes(`node_modules${sep}.bin`))
    .join(delimiter);
}

async function demoKey(server: ServerProcess): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const key = KEY.exec(server.output())?.[0];
    if (key !== undefined) return key;
    if (Date.now() > deadline) throw new Error(`the server printed no demo key: ${server.output()}`);
    await sleep(20);
  }
}

const MARKED = FILES.map(markedBlocks);
const BLOCKS = MARKED.flatMap((marked) => marked.blocks);

describe('runnable blocks of the READMEs: the markers', () => {
  it('every file has one, each well formed, on a sh block, with a name of its own', () => {
    assert.deepEqual(
      MARKED.flatMap((marked) => marked.problems),
      [],
    );
    for (const { file, blocks } of MARKED) assert.ok(blocks.length > 0, `${file} marks no block runnable`);
    const names = BLOCKS.map((block) => block.name);
    assert.deepEqual(names, [...new Set(names)], 'marker names are unique');
  });

  it('each marked block has its check, and each check its block', () => {
    assert.deepEqual(BLOCKS.map((block) => block.name).sort(), Object.keys(CHECKS).sort());
  });

  it('the README has the reader set the variables the blocks are given', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.match(readme, /^export PETSTORE_URL=http:\/\/127\.0\.0\.1:8080\/v1$/m);
    assert.match(readme, /^export PETSTORE_API_KEY=pst_…/m);
  });
});

describe('runnable blocks of the READMEs: run against a started server', () => {
  let directory: string;
  let server: ServerProcess;
  let env: Record<string, string>;

  before(async () => {
    directory = mkdtempSync(join(tmpdir(), 'petstore-docs-'));
    const databaseUrl = `sqlite:${join(directory, 'petstore.db')}`;
    server = await startServerProcess({ DATABASE_URL: databaseUrl, DEMO_BOOTSTRAP: 'true' });
    env = {
      PATH: readerPath(),
      PETSTORE_URL: `${server.url}/v1`,
      PETSTORE_API_KEY: await demoKey(server),
      DATABASE_URL: databaseUrl,
    };
  });

  after(async () => {
    await server?.kill('SIGTERM');
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  for (const block of BLOCKS) {
    it(`${block.file}:${block.line} "${block.name}"`, async () => {
      const result = await runCliLaunched(['bash', '-euo', 'pipefail', '-c'], [block.script], env);
      assert.equal(
        result.status,
        0,
        `the block failed:\n${block.script}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
      );
      const check = CHECKS[block.name];
      assert.ok(check, `no check for the block "${block.name}"`);
      await check(result, server);
    });
  }
});
