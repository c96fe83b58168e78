import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_VERSION } from '@petstore/client';
import { randomUuid } from '../../client/src/random-uuid.ts';

/** What the client needs of its runtime, checked where Node 24 cannot show it by itself. */

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ROOT = join(import.meta.dirname, '..', '..');

describe('client: portability', () => {
  it('sends the version of its package.json in the User-Agent', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'client', 'package.json'), 'utf8')) as { version: string };
    assert.equal(CLIENT_VERSION, manifest.version);
  });

  it('makes random UUIDs with crypto.randomUUID where there is one', () => {
    assert.equal(randomUuid({ randomUUID: () => 'from-randomUUID' }), 'from-randomUUID');
    assert.match(randomUuid(), UUID_V4);
  });

  it('makes them from getRandomValues in pages without randomUUID (plain HTTP)', () => {
    const bytes = Array.from({ length: 16 }, (_, index) => index * 17);
    const id = randomUuid({
      getRandomValues: (array) => {
        array.set(bytes);
        return array;
      },
    });
    assert.equal(id, '00112233-4455-4677-8899-aabbccddeeff');
  });

  it('makes them from Math.random without Web Crypto (Node 18), all distinct', () => {
    const ids = Array.from({ length: 1000 }, () => randomUuid({}));
    for (const id of ids) assert.match(id, UUID_V4);
    assert.equal(new Set(ids).size, ids.length);
  });
});
