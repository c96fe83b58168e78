import { Type } from 'typebox';
import { KEY_SCOPES } from '../domain/scopes.ts';

/** A key's scopes on the wire, as the public usage answer and the admin API show and take them. */
export const KeyScopesSchema = (description: string) =>
  Type.Array(Type.Enum(KEY_SCOPES, { type: 'string' }), { minItems: 1, uniqueItems: true, description });
