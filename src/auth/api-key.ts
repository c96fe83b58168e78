import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `pst_` + 30 random base62 characters (178 bits) + 6 base62 characters of CRC32
 * over the random part. The fixed prefix lets secret scanners recognise leaked keys; the checksum
 * lets the service refuse a mistyped or invented key without a storage lookup.
 */
export const API_KEY_PREFIX = 'pst_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

function checksumOf(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i += 1) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = randomBase62(RANDOM_LENGTH);
  return API_KEY_PREFIX + body + checksumOf(body);
}

/** True when the key has the right shape and checksum; says nothing about whether it exists. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + RANDOM_LENGTH);
  return key.endsWith(checksumOf(body));
}

/** Keys are 178-bit random secrets, so one fast SHA-256 is enough; a slow KDF buys nothing here. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'base64url');
}

/** Non-secret identifier of a key, for listings, revocation and logs. */
export function generateKeyId(): string {
  return `key_${randomBase62(16)}`;
}
