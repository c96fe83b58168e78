/** A method is a token (RFC 9110 §5.6.2, §9.1). */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const REQUEST_LINE = new RegExp(`^(${TOKEN}) [^ ]+ HTTP/[0-9]\\.[0-9]$`);
const LEADING_METHOD = new RegExp(`^(${TOKEN}) `);

/**
 * The method of a request that Node's parser refused, read from the bytes it was parsing (its
 * error's `rawPacket`) up to the end of the line it failed on (`bytesParsed`): the last complete
 * request line there, which skips a request answered before it in the same packet; else a token
 * and a space at the very start. Undefined when the bytes show none: the request line arrived in
 * an earlier packet, or there are no bytes (a request that timed out).
 */
export function methodOfRefusedRequest(packet: unknown, failedAt: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  const at = typeof failedAt === 'number' && failedAt >= 0 ? Math.min(failedAt, packet.length) : packet.length;
  const lineEnd = packet.indexOf(0x0a, at);
  const lines = packet
    .subarray(0, lineEnd < 0 ? packet.length : lineEnd)
    .toString('latin1')
    .split('\n');
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const match = REQUEST_LINE.exec((lines[index] as string).replace(/\r$/, ''));
    if (match) return match[1];
  }
  return LEADING_METHOD.exec(lines[0] as string)?.[1];
}
