import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/errors.ts';
import {
  ALL_SCOPES,
  checkScopes,
  KEY_SCOPES,
  NEVER_IMPLIED,
  scopeReader,
  scopesFromText,
  scopesToText,
} from '../../src/domain/scopes.ts';

describe('scope names', () => {
  it('are checked into the canonical order', () => {
    assert.deepEqual(checkScopes(['usage:read', 'pets:read']), ['pets:read', 'usage:read']);
    assert.deepEqual(checkScopes(['pets:write', 'usage:read', 'pets:read']), ALL_SCOPES);
  });

  it('refuse an empty list, an empty name, an unknown one and a repeated one, naming the valid scopes', () => {
    const valid = /valid scopes are pets:read, pets:write, usage:read, keys:manage$/;
    for (const [names, detail] of [
      [[], /^a key needs at least one scope;/],
      [['pets:read', ''], /^a scope is empty;/],
      [['pets:reed', 'Pets:read'], /^unknown scopes 'pets:reed', 'Pets:read';/],
      [['usage:read', 'pets:read', 'usage:read'], /^the scope 'usage:read' is repeated: name each once;/],
      [['pets:write', 'pets:read', 'pets:write', 'pets:read'], /^the scopes 'pets:read', 'pets:write' are repeated/],
    ] as const) {
      assert.throws(
        () => checkScopes(names),
        (error: unknown) =>
          error instanceof ValidationError &&
          error.code === 'invalid_body' &&
          detail.test(error.message) &&
          valid.test(error.message),
      );
    }
  });

  it('read back as they were stored, one shared list per combination', () => {
    for (const scopes of [ALL_SCOPES, ['pets:read'], ['pets:write', 'usage:read']] as const) {
      assert.deepEqual(scopesFromText(scopesToText(scopes)), scopes);
    }
    assert.equal(scopesFromText('usage:read pets:read'), scopesFromText('pets:read usage:read'));
    assert.ok(Object.isFrozen(scopesFromText('pets:read')));
  });

  it("drop a stored name this release does not know, a later release's, instead of failing the key", () => {
    assert.deepEqual(scopesFromText('pets:read pets:delete'), ['pets:read']);
  });

  it('store a key issued without a choice as every scope, and one given all of them by name as those names', () => {
    assert.equal(scopesToText(undefined), 'all pets:read pets:write usage:read');
    assert.equal(scopesToText(ALL_SCOPES), 'pets:read pets:write usage:read');
    assert.equal(scopesFromText(scopesToText(undefined)), ALL_SCOPES, 'the shared list of every scope');
    assert.equal(scopesFromText(scopesToText(ALL_SCOPES)), ALL_SCOPES);
  });

  it('never imply keys:manage: a key issued without a choice holds every other scope, keys:manage only by name', () => {
    assert.deepEqual(ALL_SCOPES, ['pets:read', 'pets:write', 'usage:read']);
    assert.ok(!scopesFromText(scopesToText(undefined)).includes('keys:manage'));
    assert.deepEqual(scopesFromText(scopesToText(KEY_SCOPES)), KEY_SCOPES, 'named, it is held');
    assert.deepEqual(checkScopes(['keys:manage', 'pets:read']), ['pets:read', 'keys:manage']);
  });

  it('read as every scope the reading release knows, one added later included', () => {
    const later = scopeReader([...KEY_SCOPES, 'pets:delete'], NEVER_IMPLIED);
    assert.deepEqual(later(scopesToText(undefined)), [...ALL_SCOPES, 'pets:delete']);
    assert.deepEqual(later(scopesToText(ALL_SCOPES)), ALL_SCOPES, 'named scopes stay those named');
    assert.deepEqual(later('pets:read usage:read'), ['pets:read', 'usage:read']);
    assert.equal(later('usage:read pets:delete'), later('pets:delete usage:read'), 'one shared list per combination');
    assert.ok(Object.isFrozen(later(scopesToText(undefined))));
  });

  it('marked as every scope, read as the three of release 1.3.0 by a reader that does not know the marker', () => {
    // Release 1.3.0 kept the names it knew and dropped the others.
    const releaseOneThreeScopes = ['pets:read', 'pets:write', 'usage:read'];
    const releaseOneThree = (text: string) => releaseOneThreeScopes.filter((scope) => text.split(' ').includes(scope));
    assert.deepEqual(releaseOneThree(scopesToText(undefined)), releaseOneThreeScopes);
  });
});
