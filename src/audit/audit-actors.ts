import { userInfo } from 'node:os';
import type { AuditContext, AuditVia } from '../domain/audit.ts';

/**
 * What of an operator's request says who makes its change. The admin API's Fastify request has
 * these fields, so the routes pass it as it is; the audit needs nothing else of HTTP.
 */
export interface OperatorRequest {
  readonly method: string;
  readonly url: string;
  readonly id: string;
  readonly headers: { readonly authorization?: string | undefined };
  /** The operator token that authenticated it: its id and label, never the token. */
  readonly operatorToken: { readonly id: string; readonly name: string | null } | undefined;
}

/**
 * Who makes a change through the admin API or the console: the operator token of the request, its
 * id and label, never the token; through what; and the request's id. Every admin route is behind a
 * token, so a change without one is a route wired wrongly.
 */
export function auditContextOf(request: OperatorRequest): AuditContext {
  const token = request.operatorToken;
  if (token === undefined) throw new Error(`${request.method} ${request.url} changes something without a token`);
  return {
    actor: { kind: 'operator_token', id: token.id, name: token.name },
    via: viaOf(request),
    requestId: request.id,
  };
}

/**
 * The operator authentication takes a request's token from `Authorization` whenever the header is
 * there, and only otherwise from the console's session cookie; so an authenticated request without
 * the header came with the cookie, which only the console's pages send (a program may replay a
 * cookie, but then it acts as the console, and its session is the console's).
 */
function viaOf(request: OperatorRequest): AuditVia {
  return request.headers.authorization === undefined ? 'console' : 'api';
}

/**
 * Who makes a change through the CLI: the OS user running it, as the system's user database names
 * the process's user; where it has no entry (a container run with a bare uid), the login name the
 * environment gives, else the uid.
 */
export function cliAuditContext(environment: NodeJS.ProcessEnv): AuditContext {
  return { actor: { kind: 'cli', user: osUser(environment) }, via: 'cli', requestId: null };
}

function osUser(environment: NodeJS.ProcessEnv): string {
  try {
    const { username } = userInfo();
    if (username !== '') return username;
  } catch {
    // No entry for this uid: the fallbacks below.
  }
  const named = environment.USER ?? environment.LOGNAME ?? environment.USERNAME;
  if (named !== undefined && named !== '') return named;
  return process.getuid === undefined ? 'unknown' : `uid ${process.getuid()}`;
}
