/**
 * Anything that looks like an API key or an operator token, in one pattern so that a log line is
 * scanned once: `ps`, then `t_` and key characters (an API key), or `o_` and token characters, which
 * add the underscore joining the token's id and secret (an operator token). Clients may
 * percent-encode any character of a URL, so encoded forms (`pst%5F…`, `%70st_…`) count too. Broader
 * than a valid key on purpose: a truncated or mistyped key is still a secret worth keeping out of
 * logs. Wherever it appears: a URL, an Authorization or Cookie header, a login body.
 */
const KEY_REST = '(?:t|%74)(?:_|%5f)(?:[0-9a-z]|%[0-9a-f]{2})+';
const OPERATOR_TOKEN_REST = '(?:o|%6f)(?:_|%5f)(?:[0-9a-z_]|%[0-9a-f]{2})+';
const SECRET_LIKE = new RegExp(`(?:p|%70)(?:s|%73)(?:(${KEY_REST})|${OPERATOR_TOKEN_REST})`, 'gi');

/** What a key-like text is replaced with: the prefix stays, so a reader knows a key was there. */
export const REDACTED_KEY = 'pst_…[redacted]';

/** What an operator-token-like text is replaced with. */
export const REDACTED_OPERATOR_TOKEN = 'pso_…[redacted]';

/**
 * `text` with every key-like and operator-token-like run replaced. Safe on a serialised JSON line:
 * a run holds only letters, digits, `_` and `%`, never a quote or a backslash, so the line stays
 * valid JSON.
 */
export function redactKeys(text: string): string {
  // The first group is the rest of a key; an operator token leaves it undefined.
  return text.replace(SECRET_LIKE, (_run: string, keyRest: string | undefined) =>
    keyRest === undefined ? REDACTED_OPERATOR_TOKEN : REDACTED_KEY,
  );
}
