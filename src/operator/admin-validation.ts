import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../errors.ts';
import { createValidatorCompiler } from '../http/validation.ts';

interface ObjectSchema {
  readonly required?: readonly string[];
}

/**
 * The public API's validation (src/http/validation.ts), strict in the same ways, with what a body
 * needs here: a request without a body is one with `{}` when its schema requires no field (`POST
 * …/keys` with no expiry), and is refused in words that name no public shape otherwise.
 */
export function createAdminValidatorCompiler(sharedSchemas: readonly object[]): FastifySchemaCompiler<FastifySchema> {
  const compile = createValidatorCompiler(sharedSchemas);
  return (route) => {
    const validate = compile(route);
    if (route.httpPart !== 'body') return validate;
    const required = ((route.schema as ObjectSchema).required ?? []).length > 0;
    return (data: unknown) => {
      if (data !== undefined && data !== null) return validate(data);
      if (!required) return { value: {} };
      return { error: new ValidationError('invalid_body', 'the request body is required: send a JSON object') };
    };
  };
}
