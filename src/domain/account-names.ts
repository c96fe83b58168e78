/** What an account name may be, as a pattern for schemas and in words for messages. */
export const ACCOUNT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
export const ACCOUNT_NAME_RULE =
  '1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit';
