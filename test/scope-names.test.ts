import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../src/errors.ts';
import { ALL_SCOPES, checkScopes, scopesFromText, scopesToText } from '../src/domain/scopes.ts';

describe('scope names', () => {
  it('are checked into the canonical order', () => {
    assert.deepEqual(checkScopes(['usage:read', 'pets:read']), ['pets:read', 'usage:read']);
    assert.deepEqual(checkScopes(['pets:write', 'usage:read', 'pets:read']), ALL_SCOPES);
  });

  it('refuse an empty list, an empty name, an unknown one and a repeated one, naming the valid scopes', () => {
    const valid = /valid scopes are pets:read, pets:write, usage:read$/;
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
});
