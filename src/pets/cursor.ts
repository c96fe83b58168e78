import { ValidationError } from '../errors.ts';

/**
 * Pagination cursors are opaque to clients: base64url of a versioned position. The position is
 * the last id of the previous page, so pets created meanwhile never shift or repeat a page.
 */
const PREFIX = 'p1.';
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const POSITION = /^p1\.(0|[1-9][0-9]{0,15})$/;

export function encodeCursor(lastId: number): string {
  return Buffer.from(PREFIX + lastId).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const decoded = BASE64URL.test(cursor) ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  const match = POSITION.exec(decoded);
  const position = match ? Number(match[1]) : Number.NaN;
  if (!Number.isSafeInteger(position) || encodeCursor(position) !== cursor) {
    throw new ValidationError(
      'invalid_query',
      'query parameter \'cursor\' is malformed: use the cursor of a Link rel="next" header unchanged',
    );
  }
  return position;
}
