import { Type, type Static, type TSchemaOptions } from 'typebox';
import { ERROR_CODES, HTTP_ERROR_CODES } from '../errors.ts';

/**
 * The Error body, written once: `{code, message, status}`, the shape of every error answer of both
 * listeners (http/error-body.ts writes them). Each document lists the codes its app answers with.
 */
function errorSchema<const Codes extends readonly string[]>(codes: Codes, options: TSchemaOptions = {}) {
  return Type.Object(
    {
      code: Type.Enum(codes, { type: 'string', description: 'Machine-readable error code.' }),
      message: Type.String({ description: 'What was wrong, and where.' }),
      status: Type.Integer({ description: 'The HTTP status code.' }),
    },
    { $id: 'Error', additionalProperties: false, ...options },
  );
}

/** The public API's Error: its codes alone. */
export const ErrorSchema = errorSchema(HTTP_ERROR_CODES);
export type ErrorBody = Static<typeof ErrorSchema>;
export const ErrorRef = Type.Unsafe<ErrorBody>(Type.Ref('Error'));

/** The admin API's Error: the public API's codes, and the operator side's. */
export const AdminErrorSchema = errorSchema(ERROR_CODES, {
  description:
    'The Error body of the public API. Besides its codes: `conflict` (409, the name is taken) and ' +
    '`forbidden` (403, a state-changing request authenticated by the console cookie came from another origin).',
});
