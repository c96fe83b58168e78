import type { Int64, NewPet } from './types.ts';

/** The int64 fields of the document (Pet's), read exactly: a number when safe, a bigint beyond 2^53. */
const EXACT_FIELDS: ReadonlySet<string> = new Set(['id', 'categoryId']);
const INTEGER_TEXT = /^-?\d+$/;
/**
 * Marks an integer literal quoted by the fallback pre-pass: written escaped into the JSON text, read as a NUL,
 * which only a string the service escaped on purpose could also hold.
 */
const QUOTED_INTEGER = '\u0000int:';
const QUOTED_INTEGER_JSON = '\\u0000int:';

interface ReviverContext {
  readonly source?: string;
}

function toInt64(digits: string): Int64 {
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : BigInt(digits);
}

// JSON.parse hands revivers the source text of each primitive (Node 21+, current browsers); older engines do not.
const SOURCE_TEXT_SUPPORTED = JSON.parse('[1]', (_key, value: unknown, context?: ReviverContext) =>
  Array.isArray(value) ? value : context?.source === '1',
)[0] as boolean;

function reviveWithSource(key: string, value: unknown, context?: ReviverContext): unknown {
  if (!EXACT_FIELDS.has(key) || typeof value !== 'number' || Number.isSafeInteger(value)) return value;
  const source = context?.source;
  return source !== undefined && INTEGER_TEXT.test(source) ? BigInt(source) : value;
}

function reviveQuoted(key: string, value: unknown): unknown {
  if (typeof value !== 'string' || !value.startsWith(QUOTED_INTEGER)) return value;
  const digits = value.slice(QUOTED_INTEGER.length);
  return EXACT_FIELDS.has(key) ? toInt64(digits) : Number(digits);
}

/**
 * Quotes every integer literal long enough to be unsafe, so its digits survive parsing. String literals are
 * matched first and kept; the look-arounds keep the digits of fractions and exponents out.
 */
function quoteLongIntegers(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])-?\d{16,}(?![.eE\d])/g, (token) =>
    token.startsWith('"') ? token : `"${QUOTED_INTEGER_JSON}${token}"`,
  );
}

/** The parse used where JSON.parse gives revivers no source text; exported so that it can be tested anywhere. */
export function parseJsonByPrePass(text: string): unknown {
  return JSON.parse(quoteLongIntegers(text), reviveQuoted);
}

/** JSON.parse that reads `id` and `categoryId` as numbers when safe and as bigints otherwise, never losing a digit. */
export function parseJson(text: string): unknown {
  return SOURCE_TEXT_SUPPORTED ? JSON.parse(text, reviveWithSource) : parseJsonByPrePass(text);
}

/** The integer's exact decimal digits; a fraction is sent as is, for the service to refuse. */
function int64Text(value: Int64): string {
  if (typeof value === 'bigint') return value.toString();
  return Number.isInteger(value) ? BigInt(value).toString() : JSON.stringify(value);
}

/** The creation body, written by hand because JSON.stringify cannot write a bigint. */
export function newPetJson(pet: NewPet): string {
  const fields = [`"name":${JSON.stringify(pet.name)}`, `"categoryId":${int64Text(pet.categoryId)}`];
  if (pet.status !== undefined) fields.push(`"status":${JSON.stringify(pet.status)}`);
  return `{${fields.join(',')}}`;
}

/**
 * A JSON.stringify replacer that writes a bigint as a string of its exact digits: `JSON.stringify(pet,
 * int64Replacer)`. A string, not a number: JSON.stringify has no way to write a bigint as a number on every engine,
 * and many readers (JavaScript's own JSON.parse among them) round numbers beyond 2^53.
 */
export function int64Replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * A JSON.parse reviver that reads back what int64Replacer wrote: an `id` or `categoryId` given as a string of digits
 * becomes an Int64 again (a number when safe, else a bigint). Every other value is left as it is.
 */
export function int64Reviver(key: string, value: unknown): unknown {
  return EXACT_FIELDS.has(key) && typeof value === 'string' && INTEGER_TEXT.test(value) ? toInt64(value) : value;
}
