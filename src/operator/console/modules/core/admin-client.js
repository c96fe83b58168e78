// @ts-check
/* global fetch, location, URLSearchParams */
// The console's one way to the admin API. An operation is named as admin-operations.ts names it
// (`GET /admin/v1/accounts/{name}`), and that table types what the call takes and answers, so that a
// page that reads one operation's answer as another's fails the type check.

/**
 * @import { AdminCall } from '../../admin-operations.ts'
 * @import { AdminError } from '../../../admin/admin-schemas.ts'
 */

/** The admin API said 401: the session ended (logout, idle, its time, its token revoked); the login page is next. */
export class LoggedOut extends Error {}

/**
 * What a call carries, as the implementation sees it: the table's types hold each operation to its own.
 * @typedef {object} AdminRequestParts
 * @property {Readonly<Record<string, string>>} [params]
 * @property {Readonly<Record<string, string | number | undefined>>} [query]
 * @property {unknown} [body]
 */

/**
 * The operation's address: its parameters put in its path, each encoded, then its query.
 * @param {string} template
 * @param {AdminRequestParts} request
 */
function addressOf(template, { params = {}, query = {} }) {
  const path = template.replace(/\{(\w+)\}/g, (_whole, /** @type {string} */ name) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${template} needs its ${name}`);
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

/**
 * Calls the admin API with the console's cookie; the JSON answer (undefined for none), or an Error
 * with the API's message.
 * @param {string} operation
 * @param {AdminRequestParts} [request]
 * @returns {Promise<unknown>}
 */
async function call(operation, request = {}) {
  const [method = 'GET', template = ''] = operation.split(' ');
  const sends = request.body !== undefined;
  const response = await fetch(addressOf(template, request), {
    method,
    credentials: 'same-origin',
    // The page's own policy (no-referrer) would send `Origin: null` with a POST, which the admin API
    // refuses from a cookie; this one sends the console's origin, to this origin only.
    referrerPolicy: 'same-origin',
    headers: { accept: 'application/json', ...(sends ? { 'content-type': 'application/json' } : {}) },
    ...(sends ? { body: JSON.stringify(request.body) } : {}),
  });
  if (response.status === 401) {
    // Back to this page once logged in again.
    location.assign(`/console/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new LoggedOut('not logged in');
  }
  const text = await response.text();
  /** @type {unknown} */
  let body = undefined;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  if (!response.ok) {
    const error = /** @type {Partial<AdminError> | undefined} */ (body);
    throw new Error(error?.message ?? `the admin API answered ${response.status}`);
  }
  return body;
}

/**
 * An operation of the admin API, typed by admin-operations.ts: `admin('GET /admin/v1/accounts/{name}',
 * { params: { name } })` is a Promise of the account's detail. The one place the answer's type is
 * asserted: the table pairs each operation with its schema, and its test pairs the table with the routes.
 */
export const admin = /** @type {AdminCall} */ (/** @type {unknown} */ (call));

/** @param {unknown} error */
export function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}
