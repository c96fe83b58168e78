import { ValidationError } from '../../errors.ts';
import type { AuditPosition } from '../../domain/audit.ts';

/**
 * The cursors of the admin lists: opaque to clients, base64url of a versioned position, the last
 * item of the page before (a keyset), so that items created meanwhile never shift or repeat a page.
 * Each list has its own version prefix: a cursor of one list is malformed for another.
 */
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ACCOUNT_POSITION = /^a1\.([1-9][0-9]{0,15})$/;
const KEY_POSITION = /^k1\.(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_]{1,64})$/;
const AUDIT_POSITION = /^t1\.(0|[1-9][0-9]{0,15})\.([1-9][0-9]{0,15})$/;

const encode = (position: string): string => Buffer.from(position).toString('base64url');

/** The groups of `pattern` in the cursor's position; a cursor that was not made here is a 400 naming `cursor`. */
function positionOf(cursor: string, pattern: RegExp): string[] {
  const decoded = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  const match = pattern.exec(decoded);
  if (match === null || encode(decoded) !== cursor) throw malformedCursor();
  return match.slice(1);
}

/** A number of a position; one beyond 2^53 was not made here either. */
function integerOf(digits: string): number {
  const value = Number(digits);
  if (!Number.isSafeInteger(value)) throw malformedCursor();
  return value;
}

function malformedCursor(): ValidationError {
  return new ValidationError(
    'invalid_query',
    "query parameter 'cursor' is malformed: pass the nextCursor of the previous page unchanged",
  );
}

export function accountCursor(lastId: number): string {
  return encode(`a1.${lastId}`);
}

/** The id the page starts after: 0 without a cursor. */
export function afterAccount(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const [id = ''] = positionOf(cursor, ACCOUNT_POSITION);
  return integerOf(id);
}

export function keyCursor(last: { readonly createdAt: number; readonly id: string }): string {
  return encode(`k1.${last.createdAt}.${last.id}`);
}

/** The key the page starts after; undefined without a cursor. */
export function afterKey(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const [createdAt = '', id = ''] = positionOf(cursor, KEY_POSITION);
  return { createdAt: integerOf(createdAt), id };
}

/** The audit trail's cursor: the time and id of the last entry of the page (newest first). */
export function auditCursor(last: AuditPosition): string {
  return encode(`t1.${last.at}.${last.id}`);
}

/** The entry the page starts after (older than it). */
export function afterAuditEntry(cursor: string): AuditPosition {
  const [at = '', id = ''] = positionOf(cursor, AUDIT_POSITION);
  return { at: integerOf(at), id: integerOf(id) };
}

/** The next page's cursor: the last item's, when more follow; null on the last page. */
export function nextCursor<T>(
  page: { readonly items: readonly T[]; readonly more: boolean },
  cursorOf: (last: T) => string,
) {
  const last = page.items.at(-1);
  return page.more && last !== undefined ? cursorOf(last) : null;
}
