import openapiTS, { astToString, type OpenAPI3, type SchemaObject } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';
import ts from 'typescript';
import { buildServices } from '../../src/composition-root.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/http/app.ts';

/** Where the generated types live, relative to the repository root. */
export const GENERATED_TYPES_PATH = 'client/src/generated/openapi.ts';

// Descriptions from the document make long comment lines, hence the max-len exemption.
const HEADER = `/**
 * Generated from the OpenAPI document the service serves at /v1/openapi.json; do not edit.
 * Regenerate with \`npm run -s client:generate\`.
 */
/* eslint-disable max-len */
`;

/**
 * The document exactly as the app serves it, built in-process over a throwaway in-memory store,
 * so generating needs neither a running server nor a network.
 */
export async function servedDocument(): Promise<OpenAPI3> {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', DEMO_BOOTSTRAP: 'false' });
  const services = await buildServices(config);
  try {
    const app = await buildApp(services);
    try {
      const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
      if (response.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${response.statusCode}`);
      return response.json<OpenAPI3>();
    } finally {
      await app.close();
    }
  } finally {
    await services.close();
  }
}

/**
 * An int64 is `number | bigint`: the client reads one as a number while it is a safe integer and as a bigint beyond
 * 2^53 (src/int64-json.ts), and accepts either when it sends one.
 */
function int64Type(schema: SchemaObject): ts.TypeNode | undefined {
  if (schema.format !== 'int64') return undefined;
  return ts.factory.createUnionTypeNode([
    ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword),
    ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword),
  ]);
}

/** The text of the generated module: TypeScript types of the served document, formatted like the repository. */
export async function generatedTypesSource(): Promise<string> {
  const ast = await openapiTS(await servedDocument(), { transform: int64Type });
  const prettierOptions = (await resolveConfig(GENERATED_TYPES_PATH)) ?? {};
  return format(`${HEADER}\n${astToString(ast)}`, { ...prettierOptions, parser: 'typescript' });
}
