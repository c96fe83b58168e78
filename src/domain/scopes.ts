import { ValidationError } from '../errors.ts';

/**
 * What a key may do. Each route of the public API names the one scope it needs in its config
 * (src/http/route-facts.ts); a key holds a fixed set of them, chosen when it is issued.
 */
export const KEY_SCOPES = ['pets:read', 'pets:write', 'usage:read'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** What a key issued without a choice holds, and what every key issued before scopes existed holds. */
export const ALL_SCOPES: readonly KeyScope[] = Object.freeze([...KEY_SCOPES]);

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

/** How a key's scopes are stored: space-separated, as OAuth writes a `scope` (RFC 6749 section 3.3). */
export function scopesToText(scopes: readonly KeyScope[]): string {
  return scopes.join(' ');
}

/**
 * A stored scope text read back. Only this service writes it, so an unknown name is a newer
 * release's scope that this one cannot grant: it is dropped rather than failing the key's every call.
 */
export function scopesFromText(text: string): readonly KeyScope[] {
  const names = text.split(' ');
  const held = KEY_SCOPES.filter((scope) => names.includes(scope));
  // One shared list per combination: every cached principal of a combination points at the same one.
  return SCOPE_SETS.get(held.join(' ')) ?? Object.freeze(held);
}

/** Every combination of scopes, each a frozen list in canonical order, by its stored text. */
const SCOPE_SETS: ReadonlyMap<string, readonly KeyScope[]> = new Map(
  KEY_SCOPES.reduce<KeyScope[][]>((sets, scope) => [...sets, ...sets.map((set) => [...set, scope])], [[]]).map(
    (set) => [set.join(' '), Object.freeze(set)],
  ),
);
