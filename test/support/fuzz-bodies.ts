import fc from 'fast-check';
import { pick, sometimes, type BodyIntent, type DefectClass, type FuzzOptions } from './fuzz-cases.ts';

/**
 * Generators of request bodies for the fuzz model: NewPets written as raw JSON text, so that number
 * literals reach the parser exactly as written, each knowing whether the interface must refuse it,
 * and JSON that is invalid, not an object, not UTF-8, deeply nested or too large.
 */

export interface BodyCase {
  readonly bytes?: Uint8Array;
  readonly intent: BodyIntent;
  readonly tags: readonly DefectClass[];
}

const text = (value: string, intent: BodyIntent, tags: readonly DefectClass[] = []): BodyCase => ({
  bytes: Buffer.from(value, 'utf8'),
  intent,
  tags,
});

const NAMES_OK = fc.oneof(
  fc.constantFrom('Rex', 'Tom', 'a', '🐶🐱', 'Ünïcödé', 'x'.repeat(200), '🐶'.repeat(200), '名前', '"quoted"'),
  fc
    .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 })
    .filter((name) => [...name].every((char) => char >= ' ' && char !== '\x7f')),
);

/** Raw JSON text of names the interface refuses. */
const NAME_LITERALS_BAD = [
  '""',
  '"\\u0000"',
  '"a\\nb"',
  '"tab\\there"',
  '"\\u007f"',
  '"\\u0085"',
  '"\\ud800"',
  '"\\udfff x"',
  '"\\ud83d"',
  JSON.stringify('x'.repeat(201)),
  JSON.stringify('🐶'.repeat(201)),
  '1',
  'null',
  '[]',
  '{}',
  'true',
];

const STATUS_LITERALS_OK = ['"available"', '"pending"', '"sold"'];
const STATUS_LITERALS_BAD = ['"AVAILABLE"', 'null', '1', '""', '"lost"', '["sold"]'];

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function categoryLiteral(options: FuzzOptions): fc.Arbitrary<{ literal: string; valid: boolean; tag?: DefectClass }> {
  const integer = fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((value) => ({
    literal: String(value),
    valid: value >= INT64_MIN && value <= INT64_MAX,
  }));
  const edge = fc
    .constantFrom(INT64_MIN, INT64_MAX, INT64_MIN - 1n, INT64_MAX + 1n, 2n ** 53n + 1n, 0n, -1n)
    .map((value) => ({ literal: String(value), valid: value >= INT64_MIN && value <= INT64_MAX }));
  // Minus zero is written as an integer: accepted, as 0.
  const minusZero = fc.constant({ literal: '-0', valid: true });
  const refused = fc
    .constantFrom(
      '"7"',
      'null',
      'true',
      '[]',
      '{}',
      '-',
      '01',
      '+1',
      '0x10',
      'NaN',
      '1_000',
      '--1',
      '"9223372036854775807"',
    )
    .map((literal) => ({ literal, valid: false }));
  const nonInteger = fc
    .constantFrom('1.0', '1.5', '1e3', '1E3', '0.0', '1e-3', '7.00', '1e20', '9.3e18', '1.5e0', '-0.0', '2E+2')
    .map((literal) => ({ literal, valid: false, tag: 'nonIntegerCategory' as const }));
  return pick(options, [
    { weight: 10, arbitrary: fc.integer({ min: -1000, max: 1000 }).map((n) => ({ literal: String(n), valid: true })) },
    { weight: 3, arbitrary: integer },
    { weight: 2, arbitrary: fc.oneof(edge, minusZero) },
    { weight: 2, arbitrary: refused },
    { weight: 2, arbitrary: nonInteger, defect: 'nonIntegerCategory' },
  ]);
}

/** A NewPet written as raw JSON text, so number literals reach the parser exactly as written. */
export function newPetText(options: FuzzOptions): fc.Arbitrary<BodyCase> {
  const name = fc.oneof(
    { weight: 8, arbitrary: NAMES_OK.map((value) => ({ literal: JSON.stringify(value), valid: true })) },
    { weight: 2, arbitrary: fc.constantFrom(...NAME_LITERALS_BAD).map((literal) => ({ literal, valid: false })) },
  );
  const status = fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: fc.constantFrom(...STATUS_LITERALS_OK).map((literal) => ({ literal, valid: true })) },
    { weight: 1, arbitrary: fc.constantFrom(...STATUS_LITERALS_BAD).map((literal) => ({ literal, valid: false })) },
  );
  const longField = fc.integer({ min: 100, max: 3000 }).map((length) => `"${'f'.repeat(length)}":1`);
  const extra = sometimes(
    fc.oneof(fc.constantFrom('"id":1', '"color":"red"', '"__proto__":{}', '"constructor":1', '"Name":"x"'), longField),
    8,
  );
  const omit = sometimes(fc.constantFrom('name', 'categoryId'), 12);
  return fc
    .record({ name, category: categoryLiteral(options), status, extra, omit, spaced: fc.boolean() })
    .map(({ name: n, category, status: s, extra: x, omit: o, spaced }) => {
      const fields: string[] = [];
      if (o !== 'name') fields.push(`"name":${n.literal}`);
      if (o !== 'categoryId') fields.push(`"categoryId":${category.literal}`);
      if (s !== undefined) fields.push(`"status":${s.literal}`);
      if (x !== undefined) fields.push(x);
      const valid = n.valid && category.valid && (s?.valid ?? true) && x === undefined && o === undefined;
      const json = spaced ? `{ ${fields.join(' , ')} }\n` : `{${fields.join(',')}}`;
      return text(json, valid ? 'valid-pet' : 'invalid', category.tag ? [category.tag] : []);
    });
}

const INVALID_JSON = [
  '{',
  '{"name":',
  'nul',
  "{'name':'x'}",
  '{"name":"x",}',
  '{"name":"x" "categoryId":1}',
  '[1,]',
  '{"a":1}}',
  '\u0000',
  'undefined',
  '{"name":"x","categoryId":01}',
  '{"name":"\\x41","categoryId":1}',
  '/*c*/{}',
  '\ufeff',
];
const JSON_NOT_OBJECT = ['[]', '1', 'null', '"x"', 'true', '[{"name":"Rex","categoryId":7}]', '\ufeff{"name":"Rex"}'];

const INVALID_UTF8: readonly number[][] = [
  [0xff, 0xfe],
  [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
];

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

export function bodyArbitrary(options: FuzzOptions): fc.Arbitrary<BodyCase> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant<BodyCase>({ intent: 'unknown', tags: [] }) },
    { weight: 16, arbitrary: newPetText(options) },
    { weight: 2, arbitrary: fc.constantFrom(...INVALID_JSON).map((value) => text(value, 'invalid')) },
    { weight: 2, arbitrary: fc.constantFrom(...JSON_NOT_OBJECT).map((value) => text(value, 'invalid')) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\r\n\t').map((value) => text(value, 'invalid')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...INVALID_UTF8)
        .map((bytes) => ({ bytes: Uint8Array.from(bytes), intent: 'invalid' as const, tags: [] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 10, max: 8000 }), fc.constantFrom('array' as const, 'object' as const))
        .map(([depth, kind]) => text(nested(depth, kind), 'invalid')),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 20_000, 200_000)
        .map((size) => text(`{"name":"${'x'.repeat(Math.max(0, size - 30))}","categoryId":1}`.padEnd(size), 'invalid')),
    },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((value) => text(value, 'unknown')) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes, intent: 'unknown' as const, tags: [] })),
    },
  );
}
