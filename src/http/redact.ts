/**
 * Anything that looks like an API key: `pst_` and key characters. Clients may percent-encode any
 * character of a URL, so encoded forms (`pst%5F…`, `%70st_…`) count too. Broader than a valid key
 * on purpose: a truncated or mistyped key is still a secret worth keeping out of logs.
 */
const KEY_LIKE = /(?:p|%70)(?:s|%73)(?:t|%74)(?:_|%5f)(?:[0-9a-z]|%[0-9a-f]{2})+/gi;

/**
 * Anything that looks like an operator token: `pso_`, then token characters and underscores (the
 * token's id and secret are joined by one), encoded forms included, as for keys. Wherever it
 * appears: a URL, an Authorization or Cookie header, a login body.
 */
const OPERATOR_TOKEN_LIKE = /(?:p|%70)(?:s|%73)(?:o|%6f)(?:_|%5f)(?:[0-9a-z_]|%[0-9a-f]{2})+/gi;

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
  return text.replace(KEY_LIKE, REDACTED_KEY).replace(OPERATOR_TOKEN_LIKE, REDACTED_OPERATOR_TOKEN);
}
