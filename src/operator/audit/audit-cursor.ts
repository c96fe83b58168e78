import { ValidationError } from '../../errors.ts';
import type { AuditPosition } from '../../storage/store.ts';

/**
 * The audit trail's page cursors, opaque to clients as the public API's are: base64url of a
 * versioned position, the time and id of the last entry of the page before. Entries written meanwhile
 * are newer than every page already read, so they never shift or repeat one.
 */
const PREFIX = 'a1.';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const POSITION = /^a1\.(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})$/;

export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(`${PREFIX}${position.at}.${position.id}`).toString('base64url');
}

export function decodeAuditCursor(cursor: string): AuditPosition {
  const decoded = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  const match = POSITION.exec(decoded);
  const position = { at: Number(match?.[1] ?? Number.NaN), id: Number(match?.[2] ?? Number.NaN) };
  const exact = Number.isSafeInteger(position.at) && Number.isSafeInteger(position.id);
  if (!exact || encodeAuditCursor(position) !== cursor) {
    throw new ValidationError(
      'invalid_query',
      "query parameter 'cursor' is malformed: use the nextCursor of the page before, unchanged",
    );
  }
  return position;
}
