import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { AdminAccountDetail, AdminHistory, AdminStatus } from '../../src/operator/admin/admin-schemas.ts';
import { ADMIN_OPERATIONS, type AdminCall, type AdminOperation } from '../../src/operator/console/admin-operations.ts';
import { request } from '../support/http-client.ts';
import { operatorAppForSuite } from './operator-app.ts';

/**
 * The table the console's admin client is typed by (admin-operations.ts), held to the admin API the
 * operator app serves: the same operations, and for each the schema of its answer, its body and its
 * query parameters. With it, the type check holds the console's calls to the routes.
 */

interface DocumentOperation {
  readonly parameters?: readonly { readonly in: string; readonly name: string }[];
  readonly requestBody?: { readonly content: Readonly<Record<string, { readonly schema: object }>> };
  readonly responses: Readonly<Record<string, { readonly content?: Readonly<Record<string, { schema: object }>> }>>;
}

interface AdminDocument {
  readonly servers: readonly { readonly url: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, DocumentOperation>>>>;
}

/** A row of the table as JSON, as far as the document shows it. */
interface TableRow {
  readonly answer: { readonly $id?: string } | null;
  readonly body?: object;
  readonly query?: { readonly properties?: object };
}

const JSON_TYPE = 'application/json';

/** A schema as the document writes it: JSON, without what TypeBox keeps besides. */
function asJson(schema: object): unknown {
  return JSON.parse(JSON.stringify(schema));
}

describe("the console's table of admin operations", () => {
  const app = operatorAppForSuite();
  let document: AdminDocument;

  before(async () => {
    document = (await request(app.operator, '/admin/v1/openapi.json', { key: app.token })).json<AdminDocument>();
  });

  it('names every operation of the admin document, and no other', () => {
    const prefix = document.servers[0]?.url ?? '';
    const served = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${prefix}${path}`),
    );
    assert.deepEqual(Object.keys(ADMIN_OPERATIONS).sort(), served.sort());
  });

  it("gives each operation the schemas of its answer, its body and its query, as the document's", () => {
    const prefix = document.servers[0]?.url ?? '';
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, served] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${prefix}${path}`;
        const table = asJson(ADMIN_OPERATIONS[name as AdminOperation]) as TableRow;
        const [success = '', answer] =
          Object.entries(served.responses).find(([status]) => status.startsWith('2')) ?? [];
        const answered = answer?.content?.[JSON_TYPE]?.schema;
        if (table.answer === null) {
          assert.equal(success, '204', name);
          assert.equal(answered, undefined, name);
        } else {
          assert.deepEqual(answered, { $ref: `#/components/schemas/${table.answer.$id}` }, name);
        }
        const body = served.requestBody?.content[JSON_TYPE]?.schema;
        assert.deepEqual(body, table.body, `${name}: its body`);
        const query = (served.parameters ?? []).filter((parameter) => parameter.in === 'query').map((it) => it.name);
        assert.deepEqual(query.sort(), Object.keys(table.query?.properties ?? {}).sort(), `${name}: its query`);
      }
    }
  });
});

/**
 * Never called: what the type check (npm run typecheck) accepts of the client and what it refuses.
 * Each `@ts-expect-error` fails the check if the line under it is accepted.
 */
export function typedCalls(admin: AdminCall): void {
  const name = 'acme';
  const status: Promise<AdminStatus> = admin('GET /admin/v1/status');
  const account: Promise<AdminAccountDetail> = admin('GET /admin/v1/accounts/{name}', { params: { name } });
  const query = { granularity: 'day', from: '2026-06-01' };
  const history: Promise<AdminHistory> = admin('GET /admin/v1/usage/history', { query });
  void [status, account, history];

  // @ts-expect-error: the status's operation does not answer an account.
  const wrong: Promise<AdminAccountDetail> = admin('GET /admin/v1/status');
  // @ts-expect-error: the ban list is not the history.
  const wrongList: Promise<AdminHistory> = admin('GET /admin/v1/bans');
  // @ts-expect-error: no such operation: the path names the account's keys under its own account.
  void admin('GET /admin/v1/keys');
  // @ts-expect-error: the account's name is part of its path.
  void admin('GET /admin/v1/accounts/{name}');
  // @ts-expect-error: the parameter of the path is `name`.
  void admin('GET /admin/v1/accounts/{name}', { params: { account: name } });
  // @ts-expect-error: a plan change's body is a plan, not an account's name.
  void admin('PUT /admin/v1/accounts/{name}/plan', { params: { name }, body: { name } });
  // @ts-expect-error: the history takes no `limit`.
  void admin('GET /admin/v1/usage/history', { query: { limit: 10 } });
  void [wrong, wrongList];
}
