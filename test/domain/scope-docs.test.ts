import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { KEY_SCOPES_EXPECTATION } from '../../src/auth/key-scopes-schema.ts';
import { KEY_SCOPES, SCOPE_MEANINGS, type KeyScope } from '../../src/domain/scopes.ts';
import { appForSuite } from '../support/suite-app.ts';

/**
 * The docs name the scopes of src/domain/scopes.ts, each with what it lets a key do, and the
 * operations the served document says need it: the tables of docs/api.md and docs/operations.md,
 * and the messages they quote. A scope added, renamed or given to another operation fails here
 * until the docs say so. (The CLI's help and both OpenAPI documents are written from the same list.)
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = ['README.md', 'docs/api.md', 'docs/operations.md'] as const;

interface ScopedOperation {
  readonly operationId: string;
  /** As the docs write it: `GET /v1/pets/{petId}`. */
  readonly call: string;
}

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const code = (text: string): string => `\`${text}\``;

/** The rows of the first table after `heading`, each as its cells, without the header and the rule. */
function tableAfter(file: string, heading: string): string[][] {
  const lines = read(file).split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `${file} has the heading ${heading}`);
  const first = lines.findIndex((line, at) => at > start && line.startsWith('|'));
  const end = lines.findIndex((line, at) => at > first && !line.startsWith('|'));
  return lines.slice(first + 2, end).map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );
}

describe('the scopes the docs name', () => {
  const app = appForSuite();
  /** Each scope's operations, in the order of the served public document. */
  const operationsOf = new Map<KeyScope, ScopedOperation[]>(KEY_SCOPES.map((scope) => [scope, []]));

  /** Every scope as a row of a docs table: its name, what it lets a key do, its operations as `write` writes them. */
  const scopeRows = (write: (operation: ScopedOperation) => string): string[][] =>
    KEY_SCOPES.map((scope) => [
      code(scope),
      SCOPE_MEANINGS[scope],
      (operationsOf.get(scope) ?? []).map(write).join(', '),
    ]);

  before(async () => {
    const answer = await fetch(`${app.url}/v1/openapi.json`);
    const document = (await answer.json()) as {
      servers: Array<{ url: string }>;
      paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, string[]>> }>>;
    };
    const prefix = new URL(document.servers[0]?.url ?? '/', app.url).pathname.replace(/\/$/, '');
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const scope = operation.security?.[0]?.bearerAuth?.[0] as KeyScope | undefined;
        if (scope === undefined || operation.operationId === undefined || method === 'head') continue;
        const known = operationsOf.get(scope);
        assert.ok(known, `${operation.operationId} needs ${scope}, which src/domain/scopes.ts does not name`);
        known.push({ operationId: operation.operationId, call: `${method.toUpperCase()} ${prefix}${path}` });
      }
    }
  });

  it('in the table of docs/api.md: every scope, what it lets a key do, and its operations', () => {
    assert.deepEqual(
      tableAfter('docs/api.md', '## Key scopes'),
      scopeRows((operation) => code(operation.operationId)),
    );
  });

  it('in the table of docs/operations.md: the same, each operation with its method and path', () => {
    assert.deepEqual(
      tableAfter('docs/operations.md', '### Key scopes'),
      scopeRows((operation) => `${code(operation.operationId)} (${code(operation.call)})`),
    );
  });

  it('in the refusals the docs quote, as the CLI and the admin API write them', () => {
    const quoted = DOCS.flatMap((file) => [
      ...[...read(file).matchAll(/valid scopes are ([^`'"\n]+?)[`'"]/g)].map((match) => [file, match[1], 'valid']),
      ...[...read(file).matchAll(/must be (a list of one or more of [^(]+?) \(got/g)].map((match) => [
        file,
        match[1],
        'list',
      ]),
    ]);
    assert.ok(quoted.length >= 2, 'the docs quote both refusals');
    for (const [file, text, kind] of quoted) {
      assert.equal(text, kind === 'valid' ? KEY_SCOPES.join(', ') : KEY_SCOPES_EXPECTATION, file);
    }
  });
});
