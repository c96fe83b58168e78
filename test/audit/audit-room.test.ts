import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { auditContextOf, type OperatorRequest } from '../../src/audit/audit-actors.ts';

/**
 * The audit lives in one folder, src/audit/: the audited change, who made it, and the trail's
 * service. The CLI, the admin API and the console reach it there, and it reaches none of them.
 */

const SOURCE = resolve(import.meta.dirname, '../../src');

/** Every TypeScript file under `folder` of src/, as paths relative to src/. */
function sourcesIn(folder: string): string[] {
  return readdirSync(join(SOURCE, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));
}

/** The folders of src/ a file imports from (`domain`, `storage`, …; `.` for a file at the top). */
function importedFolders(file: string): Set<string> {
  const text = readFileSync(join(SOURCE, file), 'utf8');
  const specifiers = [...text.matchAll(/^(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gm)].map((match) => match[1]);
  return new Set(
    specifiers.map((specifier) => {
      const target = relative(SOURCE, resolve(join(SOURCE, file, '..'), specifier ?? ''));
      return target.includes('/') ? (target.split('/')[0] as string) : '.';
    }),
  );
}

describe('the audit room', () => {
  it('imports nothing of its callers: the CLI, the HTTP edge, the operator side', () => {
    const files = sourcesIn('audit');
    assert.deepEqual(files.sort(), ['audit/audit-actors.ts', 'audit/audit-service.ts', 'audit/audited-change.ts']);
    for (const file of files) {
      for (const folder of ['cli', 'http', 'operator'])
        assert.ok(!importedFolders(file).has(folder), `${file} imports from src/${folder}/`);
    }
  });

  it('is what the CLI reaches for its changes, not the operator side', () => {
    for (const file of sourcesIn('cli')) assert.ok(!importedFolders(file).has('operator'), `${file} imports operator/`);
    const cli = readFileSync(join(SOURCE, 'cli/run-cli.ts'), 'utf8');
    assert.match(cli, /from '\.\.\/audit\/audit-actors\.ts'/);
  });

  it("names a request's token and request id, and tells the console's cookie from the admin API's header", () => {
    const request = (authorization: string | undefined): OperatorRequest => ({
      method: 'POST',
      url: '/admin/v1/accounts',
      id: 'req-1',
      headers: authorization === undefined ? {} : { authorization },
      operatorToken: { id: 'AbCdEfGh01234567', name: 'deploys' },
    });
    const actor = { kind: 'operator_token', id: 'AbCdEfGh01234567', name: 'deploys' };
    assert.deepEqual(auditContextOf(request('Bearer pso_x')), { actor, via: 'api', requestId: 'req-1' });
    assert.deepEqual(auditContextOf(request(undefined)), { actor, via: 'console', requestId: 'req-1' });
    assert.throws(
      () => auditContextOf({ ...request(undefined), operatorToken: undefined }),
      /POST \/admin\/v1\/accounts changes something without a token/,
    );
  });
});
