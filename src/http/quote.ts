/** Most characters of client input an error message repeats; a huge input never makes a huge answer. */
export const QUOTE_LIMIT = 100;

/**
 * The first `QUOTE_LIMIT` characters of client input, followed by `…` when more was cut off.
 * Cuts between code points, never inside a surrogate pair.
 */
export function excerpt(input: string, limit = QUOTE_LIMIT): string {
  if (input.length <= limit) return input;
  let end = limit;
  const last = input.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${input.slice(0, end)}…`;
}

/** Client input as a JSON string literal, cut to `QUOTE_LIMIT` characters. */
export function quoted(input: string): string {
  return JSON.stringify(excerpt(input));
}
