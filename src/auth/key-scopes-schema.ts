import { Type } from 'typebox';
import { KEY_SCOPES } from '../domain/scopes.ts';

/** What a valid list of scopes is, in the words of a refusal: "field 'scopes' must be …". */
export const KEY_SCOPES_EXPECTATION = `a list of one or more of ${KEY_SCOPES.join(', ')}, each once`;

/**
 * A key's scopes on the wire, as the public usage answer and the admin API show and take them.
 * Where a request takes them, `expectation` names the valid scopes in the message of a refusal.
 */
export const KeyScopesSchema = (description: string, expectation?: string) =>
  Type.Array(Type.Enum(KEY_SCOPES, { type: 'string' }), {
    minItems: 1,
    uniqueItems: true,
    description,
    ...(expectation === undefined ? {} : { 'x-expectation': expectation }),
  });
