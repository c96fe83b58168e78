import type { Static, TSchema } from 'typebox';
import {
  AccountDetailSchema,
  AccountSchema,
  AccountsQuery,
  AccountsSchema,
  AccountUsageSchema,
  AuditQuery,
  AuditTrailSchema,
  BansSchema,
  CreatedKeySchema,
  DeprecatedCallersSchema,
  HistoryQuery,
  HistorySchema,
  KeyLimitBody,
  KeySchema,
  KeysQuery,
  KeysSchema,
  NewAccountBody,
  NewKeyBody,
  OperatorTokenSchema,
  OperatorTokensSchema,
  PlanChangeBody,
  SessionBody,
  StatusSchema,
  TopAccountsSchema,
  TopQuery,
} from '../admin/admin-schemas.ts';

/**
 * What an operation takes and answers, by the admin API's own schemas: `answer` is the schema of
 * its 2xx body (null: a 204, no body), `body` of the JSON it takes, `query` of its query string.
 */
interface AdminOperationSchemas {
  readonly answer: TSchema | null;
  readonly body?: TSchema;
  readonly query?: TSchema;
}

/**
 * Every operation of the admin API, by its method and its path as the admin document writes it
 * (parameters in braces). The console's admin client takes these keys, and its answers, bodies and
 * queries are typed from the schemas here, so that a path called with another operation's answer
 * fails the type check; test/operator/console-admin-operations.test.ts holds the table to the
 * routes the operator app serves.
 */
export const ADMIN_OPERATIONS = {
  'POST /admin/v1/session': { answer: null, body: SessionBody },
  'DELETE /admin/v1/session': { answer: null },
  'GET /admin/v1/status': { answer: StatusSchema },
  'GET /admin/v1/accounts': { answer: AccountsSchema, query: AccountsQuery },
  'POST /admin/v1/accounts': { answer: AccountSchema, body: NewAccountBody },
  'GET /admin/v1/accounts/{name}': { answer: AccountDetailSchema },
  'PUT /admin/v1/accounts/{name}/plan': { answer: AccountSchema, body: PlanChangeBody },
  'PUT /admin/v1/accounts/{name}/key-limit': { answer: AccountSchema, body: KeyLimitBody },
  'GET /admin/v1/accounts/{name}/keys': { answer: KeysSchema, query: KeysQuery },
  'POST /admin/v1/accounts/{name}/keys': { answer: CreatedKeySchema, body: NewKeyBody },
  'POST /admin/v1/keys/{id}/revoke': { answer: KeySchema },
  'GET /admin/v1/bans': { answer: BansSchema },
  'POST /admin/v1/bans/{keyId}/lift': { answer: KeySchema },
  'GET /admin/v1/accounts/{name}/usage': { answer: AccountUsageSchema },
  'GET /admin/v1/accounts/{name}/usage/history': { answer: HistorySchema, query: HistoryQuery },
  'GET /admin/v1/usage/history': { answer: HistorySchema, query: HistoryQuery },
  'GET /admin/v1/usage/top': { answer: TopAccountsSchema, query: TopQuery },
  'GET /admin/v1/deprecated-callers': { answer: DeprecatedCallersSchema },
  'GET /admin/v1/operator-tokens': { answer: OperatorTokensSchema },
  'POST /admin/v1/operator-tokens/{id}/revoke': { answer: OperatorTokenSchema },
  'GET /admin/v1/audit': { answer: AuditTrailSchema, query: AuditQuery },
} as const satisfies Readonly<Record<string, AdminOperationSchemas>>;

/** An operation: `GET /admin/v1/accounts/{name}`. */
export type AdminOperation = keyof typeof ADMIN_OPERATIONS;

type SchemasOf<Operation extends AdminOperation> = (typeof ADMIN_OPERATIONS)[Operation];

/** The body of the operation's answer; `undefined` for a 204. */
export type AdminAnswer<Operation extends AdminOperation> = SchemasOf<Operation>['answer'] extends TSchema
  ? Static<SchemasOf<Operation>['answer']>
  : undefined;

/** The names of a path's parameters: `name` and `keyId` of `/a/{name}/b/{keyId}`. */
type ParameterNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParameterNames<Rest>
  : never;

/** What the request carries besides the operation: its path's parameters, its query, its body. */
type ParamsPart<Operation extends AdminOperation> = [ParameterNames<Operation>] extends [never]
  ? { readonly params?: undefined }
  : { readonly params: Readonly<Record<ParameterNames<Operation>, string>> };

/**
 * Query parameters by the names the operation's schema gives them. The values are sent as text,
 * and the admin API checks them: the console passes on what an operator typed in its address.
 */
type QueryPart<Operation extends AdminOperation> =
  SchemasOf<Operation> extends { readonly query: TSchema }
    ? { readonly query?: Readonly<Partial<Record<keyof Static<SchemasOf<Operation>['query']>, string | number>>> }
    : { readonly query?: undefined };

type BodyPart<Operation extends AdminOperation> =
  SchemasOf<Operation> extends { readonly body: TSchema }
    ? { readonly body: Static<SchemasOf<Operation>['body']> }
    : { readonly body?: undefined };

export type AdminRequest<Operation extends AdminOperation> = ParamsPart<Operation> &
  QueryPart<Operation> &
  BodyPart<Operation>;

/** The request may be left out when the operation needs nothing in it. */
type RequestArguments<Operation extends AdminOperation> =
  Record<string, never> extends AdminRequest<Operation>
    ? [request?: AdminRequest<Operation>]
    : [request: AdminRequest<Operation>];

/** Calls an operation of the admin API: its answer, typed by the operation's schema. */
export type AdminCall = <Operation extends AdminOperation>(
  operation: Operation,
  ...request: RequestArguments<Operation>
) => Promise<AdminAnswer<Operation>>;
