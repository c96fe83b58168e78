/**
 * How many times a header appears in a request. Node keeps only the first of a repeated header such
 * as Host or Authorization in `request.headers`; the raw list (`request.rawHeaders`: name, value,
 * name, value…) has them all. `lowerCaseName` is compared without regard to case; the length test
 * first keeps the common case (another header) to one comparison.
 */
export function rawHeaderCount(rawHeaders: readonly string[], lowerCaseName: string): number {
  let count = 0;
  for (let at = 0; at < rawHeaders.length; at += 2) {
    const name = rawHeaders[at] as string;
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) count += 1;
  }
  return count;
}
