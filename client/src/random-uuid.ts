/** The part of Web Crypto this module uses; absent from Node 18's globals and partly absent in insecure pages. */
export interface RandomSource {
  readonly randomUUID?: () => string;
  readonly getRandomValues?: <T extends Uint8Array>(array: T) => T;
}

function randomBytes(source: RandomSource | undefined): Uint8Array {
  const bytes = new Uint8Array(16);
  if (typeof source?.getRandomValues === 'function') return source.getRandomValues(bytes);
  // No Web Crypto at all (Node 18 without a flag): an Idempotency-Key needs uniqueness, not secrecy.
  for (let index = 0; index < bytes.length; index += 1) bytes[index] = Math.floor(Math.random() * 256);
  return bytes;
}

/**
 * A random (version 4) UUID: `crypto.randomUUID` where the runtime has it, else built from
 * `crypto.getRandomValues` (pages served over plain HTTP), else from `Math.random` (Node 18).
 */
export function randomUuid(source: RandomSource | undefined = globalThis.crypto as RandomSource | undefined): string {
  if (typeof source?.randomUUID === 'function') return source.randomUUID();
  const bytes = randomBytes(source);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
