import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { sharedSchemas } from '../../pets/pet-schemas.ts';
import { USAGE_SCHEMAS } from '../routes/usage-schemas.ts';
import { createValidatorCompiler } from '../validation.ts';

/**
 * The shared schemas, and how route schemas are used: requests are validated (validation.ts);
 * responses are not serialised by them, since handlers send pre-serialised strings. Response schemas
 * exist for the document and its test.
 */
export const schemas = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.setValidatorCompiler(createValidatorCompiler(sharedSchemas));
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));
    for (const schema of sharedSchemas) app.addSchema(schema);
    for (const schema of USAGE_SCHEMAS) app.addSchema(schema);
  },
  { name: 'schemas' },
);
