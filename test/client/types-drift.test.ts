import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GENERATED_TYPES_PATH, generatedTypesSource } from '../../client/scripts/openapi-types.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('client: generated OpenAPI types', () => {
  it('match the document the service serves', async () => {
    const committed = readFileSync(join(ROOT, GENERATED_TYPES_PATH), 'utf8');
    const fresh = await generatedTypesSource();
    if (committed === fresh) return;
    const committedLines = committed.split('\n');
    const freshLines = fresh.split('\n');
    const line = freshLines.findIndex((text, index) => text !== committedLines[index]);
    assert.fail(
      `${GENERATED_TYPES_PATH} no longer matches the served OpenAPI document ` +
        `(first difference at line ${line + 1}: ${JSON.stringify(freshLines[line] ?? '<end of file>')}). ` +
        'Run `npm run -s client:generate` and commit the result.',
    );
  });
});
