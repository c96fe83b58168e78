import { ValidationError } from '../errors.ts';

/**
 * What a key may do. Each route of the public API names the one scope it needs in its config
 * (src/http/route-facts.ts); a key holds a fixed set of them, chosen when it is issued. A name is
 * `<resource>:<verb>`, so none is ever the stored marker of every scope (EVERY_SCOPE_MARKER).
 */
export const KEY_SCOPES = ['pets:read', 'pets:write', 'usage:read', 'keys:manage'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/**
 * Scopes a key holds only when they are named for it: a key issued without a choice has every
 * other scope. `keys:manage` mints and revokes the account's keys, so a leaked everyday key must
 * not be able to mint more.
 */
export const NEVER_IMPLIED: readonly KeyScope[] = Object.freeze(['keys:manage']);

/** The scopes a key issued without a choice holds: every scope but those never implied, in KEY_SCOPES order. */
export const IMPLIED_SCOPES: readonly KeyScope[] = Object.freeze(
  KEY_SCOPES.filter((scope) => !NEVER_IMPLIED.includes(scope)),
);

/**
 * What each scope lets a key do, as the CLI's help, both OpenAPI documents and the docs' tables say
 * it (test/domain/scope-names.test.ts holds the docs to it). Which operations need it follows from the routes.
 */
export const SCOPE_MEANINGS: Readonly<Record<KeyScope, string>> = Object.freeze({
  'pets:read': 'read pets',
  'pets:write': 'add pets',
  'usage:read': "read the account's usage",
  'keys:manage': "list, create, roll and revoke the account's keys",
});

/** Every scope with what it lets a key do: `pets:read (read pets), …`, each name passed through `name`. */
export function scopesExplained(name: (scope: KeyScope) => string = (scope) => scope): string {
  return KEY_SCOPES.map((scope) => `${name(scope)} (${SCOPE_MEANINGS[scope]})`).join(', ');
}

/** A refused list of scopes; the message names every valid scope. */
function invalidScopes(detail: string): ValidationError {
  return new ValidationError('invalid_body', `${detail}; valid scopes are ${KEY_SCOPES.join(', ')}`);
}

function isKeyScope(value: string): value is KeyScope {
  return (KEY_SCOPES as readonly string[]).includes(value);
}

/**
 * The scopes named, in the canonical order of KEY_SCOPES. Refuses an empty list, an unknown name and
 * a repeated one: a key that may do nothing is a mistake, a mistyped scope must not be dropped, and a
 * repeat is refused as the admin API's schema refuses it (`uniqueItems`), so the CLI and the admin API
 * take the same lists.
 */
export function checkScopes(names: readonly string[]): readonly KeyScope[] {
  if (names.length === 0) throw invalidScopes('a key needs at least one scope');
  // `pets:read,,usage:read` typed on the command line: named as empty, not as an unknown ''.
  if (names.includes('')) throw invalidScopes('a scope is empty');
  const unknown = names.filter((name) => !isKeyScope(name));
  if (unknown.length > 0) {
    const listed = unknown.map((name) => `'${name}'`).join(', ');
    throw invalidScopes(`unknown scope${unknown.length > 1 ? 's' : ''} ${listed}`);
  }
  const repeated = KEY_SCOPES.filter((scope) => names.indexOf(scope) !== names.lastIndexOf(scope));
  if (repeated.length > 0) {
    const listed = repeated.map((name) => `'${name}'`).join(', ');
    const [noun, verb] = repeated.length > 1 ? ['scopes', 'are'] : ['scope', 'is'];
    throw invalidScopes(`the ${noun} ${listed} ${verb} repeated: name each once`);
  }
  return Object.freeze(KEY_SCOPES.filter((scope) => names.includes(scope)));
}

/**
 * The first word of the stored text of a key issued without a choice of scopes: it holds every
 * scope of the release that reads it but those never implied (NEVER_IMPLIED), those added after
 * it was issued included.
 */
export const EVERY_SCOPE_MARKER = 'all';

/**
 * How a key's scopes are stored: space-separated, as OAuth writes a `scope` (RFC 6749 section 3.3).
 * No choice made (`undefined`) is the marker followed by this release's implied scopes: a release
 * that does not know the marker (1.3.0, during a rolling upgrade) drops it as an unknown name and
 * reads the scopes after it, which were every scope it knew.
 */
export function scopesToText(scopes: readonly KeyScope[] | undefined): string {
  return scopes === undefined ? [EVERY_SCOPE_MARKER, ...IMPLIED_SCOPES].join(' ') : scopes.join(' ');
}

/**
 * How a release that knows the scopes `known` reads stored scope texts: the marker as every one of
 * them but those in `never` (never implied), any other text as the known names it holds. Only this
 * service writes the texts, so an unknown name is a newer release's scope that this one cannot
 * grant: it is dropped rather than failing the key's every call. The lists read are frozen, in the
 * order of `known`, and shared: one per combination, so every cached principal of a combination
 * points at the same one.
 */
export function scopeReader<S extends string>(
  known: readonly S[],
  never: readonly S[] = [],
): (text: string) => readonly S[] {
  const combinations = new Map(
    known
      .reduce<S[][]>((sets, scope) => [...sets, ...sets.map((set) => [...set, scope])], [[]])
      .map((set) => [set.join(' '), Object.freeze(set)] as const),
  );
  const every = combinations.get(known.filter((scope) => !never.includes(scope)).join(' ')) as readonly S[];
  return (text) => {
    const names = text.split(' ');
    if (names[0] === EVERY_SCOPE_MARKER) return every;
    const held = known.filter((scope) => names.includes(scope));
    return combinations.get(held.join(' ')) ?? Object.freeze(held);
  };
}

/** A stored scope text read back by this release (scopeReader). */
export const scopesFromText: (text: string) => readonly KeyScope[] = scopeReader(KEY_SCOPES, NEVER_IMPLIED);

/**
 * The scopes a key issued without a choice holds in this release (every scope but those never
 * implied): the shared list of that combination.
 */
export const ALL_SCOPES: readonly KeyScope[] = scopesFromText(EVERY_SCOPE_MARKER);
