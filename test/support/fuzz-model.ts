import fc from 'fast-check';
import { request as httpRequest, METHODS, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { KEY_SCOPES } from '../../src/domain/scopes.ts';
import { HTTP_ERROR_CODES } from '../../src/errors.ts';
import { startTestApp, type BackendPair, type TestApp } from './test-app.ts';

/**
 * The fuzz model shared by the CI sample (test/fuzz/fuzz.test.ts) and the long campaign (test/fuzz/campaign.ts):
 * generators of whole HTTP requests, a raw node:http sender, and the property every answer must
 * satisfy. Generators lean towards requests that get past authentication and parsing, so the
 * deeper steps (validation, storage, idempotency) see most of the cases.
 */

/** Defects other changes are fixing; a run can leave their inputs out until those changes land. */
export const KNOWN_DEFECTS = {
  /** `Expect: <anything but 100-continue>` is answered 417 by Node itself, without the Error body. */
  expectOther: 'Expect other than 100-continue: 417 without an Error body',
  /** `CONNECT` is taken over by Node's connect event; nobody answers and the socket is dropped. */
  connect: 'CONNECT: no answer at all',
  /** Methods outside the router's list (TRACE, PROPFIND, …) on a v1 path get 404 instead of 405. */
  unlistedMethod: 'TRACE/PROPFIND and other unlisted methods on a v1 path: 404 instead of 405',
  /** `categoryId` written as 1.0, 1e3 or 1.5e0 is rounded and stored instead of refused. */
  nonIntegerCategory: 'categoryId as a fraction or exponent literal: accepted instead of 400',
  /** Two Authorization headers are joined or one is picked instead of refused. */
  duplicateAuthorization: 'two Authorization headers: accepted instead of 401',
  /** A JSON media type with a charset other than UTF-8 is parsed as UTF-8 instead of refused. */
  foreignCharset: 'application/json with a non-UTF-8 charset: accepted instead of 415',
} as const;

export type DefectClass = keyof typeof KNOWN_DEFECTS;

export interface FuzzKeys {
  /** An enterprise key whose limits no run reaches. */
  readonly unlimited: string;
  /** A free-plan key: it reaches its limit, then its ban, within a run. */
  readonly limited: string;
}

export interface FuzzOptions {
  readonly keys: FuzzKeys;
  /** Inputs of these classes are not generated. */
  readonly exclude?: ReadonlySet<DefectClass>;
}

/** What the body was meant to be, so that a 2xx for a body the interface refuses can be caught. */
export type BodyIntent = 'valid-pet' | 'invalid' | 'unknown';

export interface FuzzRequest {
  /** The method as written on the wire: lower case and odd tokens included. */
  readonly method: string;
  /** The request target as written on the wire (latin1: one character per byte). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: Uint8Array;
  readonly intent: BodyIntent;
  /** The defect classes this input may trigger, so that failures can be told apart. */
  readonly tags: readonly DefectClass[];
}

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type Verdict =
  | { readonly ok: true; readonly status: number; readonly code?: string }
  | { readonly ok: false; readonly status: number | 'none'; readonly problem: string };

/** The longest Error message a client should ever have to read. */
export const MESSAGE_MAX_CHARS = 400;

const ERROR_CODES: ReadonlySet<string> = new Set(HTTP_ERROR_CODES);
const KEY_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// ---------------------------------------------------------------- generators

/** Chooses among `choices`, leaving out those whose defect class is excluded. */
function pick<T>(
  options: FuzzOptions,
  choices: ReadonlyArray<{ weight: number; arbitrary: fc.Arbitrary<T>; defect?: DefectClass }>,
): fc.Arbitrary<T> {
  const kept = choices.filter((choice) => choice.defect === undefined || !options.exclude?.has(choice.defect));
  return fc.oneof(...kept.map(({ weight, arbitrary }) => ({ weight, arbitrary })));
}

/** UTF-8 bytes of `text` as a latin1 string, so node:http writes them unchanged. */
function utf8OnTheWire(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

const STANDARD_OTHER_METHODS = ['PUT', 'DELETE', 'PATCH', 'OPTIONS'];
const UNLISTED_METHODS = ['TRACE', 'PROPFIND', 'PURGE', 'LOCK', 'SEARCH', 'QUERY', 'MKCOL', 'REPORT', 'M-SEARCH'];
const MALFORMED_METHODS = ['get', 'post', 'Get', 'hEaD', 'FOO', 'G3T', 'GET\t', 'BREW', 'X', 'GETT', 'POSTS'];

export function methodArbitrary(options: FuzzOptions): fc.Arbitrary<string> {
  return pick(options, [
    { weight: 12, arbitrary: fc.constantFrom('GET', 'POST') },
    { weight: 3, arbitrary: fc.constant('HEAD') },
    { weight: 3, arbitrary: fc.constantFrom(...STANDARD_OTHER_METHODS) },
    { weight: 2, arbitrary: fc.constantFrom(...UNLISTED_METHODS), defect: 'unlistedMethod' },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_METHODS) },
    { weight: 1, arbitrary: fc.constant('CONNECT'), defect: 'connect' },
  ]);
}

const ODD_IDS = [
  '-0',
  '0',
  '00',
  '01',
  '+1',
  '1e3',
  '1E3',
  '0x10',
  '0b1',
  '1.0',
  '1.5',
  '-1',
  'NaN',
  'Infinity',
  'null',
  'true',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999',
  '%31',
  '%2D1',
  '%2F',
  '%2f..%2f',
  '%',
  '%%',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%00',
  '%FF',
  '%F0%9F%90%B6',
  '..',
  '.',
  '...',
  '1;x',
  '1,2',
  '1%20',
  '%201',
  '~1',
  '$1',
  '1#x',
];

function idSegmentArbitrary(keys: FuzzKeys): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 60 }).map(String) },
    { weight: 3, arbitrary: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String) },
    { weight: 5, arbitrary: fc.constantFrom(...ODD_IDS) },
    { weight: 1, arbitrary: fc.integer({ min: 90, max: 4000 }).map((length) => '9'.repeat(length)) },
    { weight: 1, arbitrary: fc.integer({ min: 90, max: 4000 }).map((length) => 'a'.repeat(length)) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).map(utf8OnTheWire) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 6 }).map(rawLatin1) },
    { weight: 1, arbitrary: fc.constantFrom(keys.unlimited, keys.limited, `Bearer%20${keys.unlimited}`) },
  );
}

/** Bytes 0x80-0xFF alone: never valid UTF-8 in a path. */
function rawLatin1(text: string): string {
  return [...text].map((char) => String.fromCharCode(0x80 | (char.charCodeAt(0) & 0x7f))).join('');
}

const GARBAGE_CURSORS = ['', 'x', '====', 'cDEuNQ==', 'cDEuLTE', 'cDIuNQ', 'cDEuMDU', 'p1.5', '%ZZ', '..', 'cDEu'];

function cursorArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.integer({ min: 0, max: 200 }).map((id) => Buffer.from(`p1.${id}`).toString('base64url')),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('p1.', 'p0.', 'p1.-', 'p1.0', 'p2.')
        .chain((prefix) => fc.bigInt({ min: 0n, max: 2n ** 70n }).map((n) => prefix + String(n)))
        .map((text) => Buffer.from(text).toString('base64url')),
    },
    { weight: 2, arbitrary: fc.constantFrom(...GARBAGE_CURSORS) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 6000 }).map((length) => 'A'.repeat(length)) },
  );
}

const LIMITS = ['0', '1', '20', '100', '101', '-1', '-0', '1e1', '0x10', '01', '+5', '5.0', ' 5', '５', 'abc', ''];
const STATUSES = ['available', 'pending', 'sold', 'Available', 'SOLD', '', 'unknown', 'sold%00', 'sold%20', '%FF'];

function queryParameterArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 100 }).map((limit) => `limit=${limit}`) },
    { weight: 3, arbitrary: fc.constantFrom(...LIMITS).map((limit) => `limit=${limit}`) },
    { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((limit) => `limit=${limit}`) },
    { weight: 4, arbitrary: fc.constantFrom(...STATUSES).map((status) => `status=${status}`) },
    { weight: 4, arbitrary: cursorArbitrary().map((cursor) => `cursor=${cursor}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('limit', 'status', 'cursor', '', '__proto__', 'constructor', 'limit[]', 'x'),
    },
    { weight: 1, arbitrary: fc.constantFrom('__proto__=1', 'constructor=x', 'limit[]=5', '=5', '&', '%=%', 'a=%E0') },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('limit', 'status', 'cursor', 'q'), fc.string({ unit: 'grapheme', maxLength: 200 }))
        .map(([name, value]) => `${name}=${utf8OnTheWire(value).replace(/[\s#&]/g, encodeURIComponent)}`),
    },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 8000 }).map((length) => `q=${'z'.repeat(length)}`) },
  );
}

function queryArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    {
      weight: 6,
      arbitrary: fc
        .array(queryParameterArbitrary(), { minLength: 1, maxLength: 5 })
        .map((parts) => `?${parts.join('&')}`),
    },
    { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?#frag', '?limit=5#x', '??limit=5', '?limit=5;limit=6') },
  );
}

const OTHER_PATHS = [
  '/',
  '/v1',
  '/v1/',
  '/v1/pets/',
  '/v1//pets',
  '/V1/PETS',
  '/v1/pets/1/x',
  '/v1/pets/../pets',
  '/v1/./pets',
  '/v2/pets',
  '/v1/store',
  '/healthz',
  '/readyz',
  '/metrics',
  '/v1/openapi.json',
  '/docs',
  '/docs/',
  '/docs/json',
  '/docs/static/index.html',
  '/docs/%2e%2e/%2e%2e/etc/passwd',
  '*',
  'http://127.0.0.1/v1/pets',
  '/%2e%2e/v1/pets',
  '/v1/pets%2F1',
  '/v1/pets?',
  '/v1/pets/%',
  '//v1/pets',
  '/v1/pets;x=1',
  '/v1/pets/1?x=%',
];

export function pathArbitrary(keys: FuzzKeys): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 8, arbitrary: queryArbitrary().map((query) => `/v1/pets${query}`) },
      { weight: 6, arbitrary: idSegmentArbitrary(keys).map((id) => `/v1/pets/${id}`) },
      // The account holder's keys: listed with the pets' queries, and revoked or rolled by odd ids.
      { weight: 2, arbitrary: queryArbitrary().map((query) => `/v1/keys${query}`) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.oneof(idSegmentArbitrary(keys), fc.constant('key_0000000000000000')),
            fc.constantFrom('revoke', 'roll', ''),
          )
          .map(([id, action]) => `/v1/keys/${id}${action === '' ? '' : `/${action}`}`),
      },
      { weight: 2, arbitrary: fc.constantFrom(...OTHER_PATHS) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.constantFrom('/v1/', '/v1/pets/1/', '/x/'), fc.integer({ min: 200, max: 6000 }))
          .map(([prefix, length]) => prefix + 'y'.repeat(length)),
      },
    )
    .map((path) => path.replace(/[\u0100-\u{10ffff}]+/gu, utf8OnTheWire));
}

function mangledKey(key: string): fc.Arbitrary<string> {
  return fc.integer({ min: 4, max: key.length - 1 }).chain((index) =>
    fc
      .constantFrom(...KEY_CHARS)
      .filter((char) => char !== key[index])
      .map((char) => key.slice(0, index) + char + key.slice(index + 1)),
  );
}

export function authorizationArbitrary(options: FuzzOptions): fc.Arbitrary<string | readonly string[] | undefined> {
  const { unlimited, limited } = options.keys;
  const garbageKey = fc.string({ unit: fc.constantFrom(...KEY_CHARS), minLength: 36, maxLength: 36 });
  return pick<string | readonly string[] | undefined>(options, [
    { weight: 30, arbitrary: fc.constant(`Bearer ${unlimited}`) },
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom(`bearer ${unlimited}`, `BEARER ${unlimited}`, `Bearer  ${unlimited}`) },
    { weight: 2, arbitrary: fc.constant(`Bearer ${limited}`) },
    { weight: 1, arbitrary: fc.constantFrom(`Basic ${unlimited}`, `Token ${unlimited}`, unlimited, 'Bearer', '') },
    { weight: 1, arbitrary: fc.constantFrom(`Bearer ${unlimited} `, `Bearer ${unlimited}x`, `Bearer\t${unlimited}`) },
    { weight: 1, arbitrary: mangledKey(unlimited).map((key) => `Bearer ${key}`) },
    { weight: 1, arbitrary: garbageKey.map((key) => `Bearer pst_${key}`) },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: 'binary-ascii', maxLength: 60 })
        .map(printable)
        .map((s) => `Bearer ${s}`),
    },
    { weight: 1, arbitrary: fc.integer({ min: 200, max: 8000 }).map((length) => `Bearer ${'k'.repeat(length)}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        [`Bearer ${unlimited}`, `Bearer ${unlimited}`],
        [`Bearer ${unlimited}`, `Bearer ${limited}`],
        [`Bearer ${unlimited}`, 'Bearer pst_nonsense'],
        ['Bearer pst_nonsense', `Bearer ${unlimited}`],
      ),
      defect: 'duplicateAuthorization',
    },
  ]);
}

/** Characters node:http accepts in a header value. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

const MEDIA_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'APPLICATION/JSON',
  'application/json;charset="utf-8"',
  'Application/Json ; Charset=utf-8',
];
const OTHER_MEDIA_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/json-patch+json',
  'application/problem+json',
  '',
  ';;;',
  'application/',
  '*/*',
  'json',
  'application/json, text/plain',
  'text/json',
];
const FOREIGN_CHARSETS = [
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=iso-8859-1',
  'application/json; charset=ascii',
  'application/json; charset=',
  'application/json; charset=nonsense',
];

function contentTypeArbitrary(options: FuzzOptions): fc.Arbitrary<string | readonly string[] | undefined> {
  return pick<string | readonly string[] | undefined>(options, [
    { weight: 20, arbitrary: fc.constantFrom(...MEDIA_TYPES) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom(...OTHER_MEDIA_TYPES) },
    { weight: 1, arbitrary: fc.constant(['application/json', 'text/plain']) },
    { weight: 1, arbitrary: fc.integer({ min: 100, max: 6000 }).map((length) => `text/${'p'.repeat(length)}`) },
    { weight: 1, arbitrary: fc.constantFrom(...FOREIGN_CHARSETS), defect: 'foreignCharset' },
  ]);
}

const IDEMPOTENCY_KEYS = [
  '',
  ' ',
  'fuzz-replay',
  'fuzz-replay-2',
  'a'.repeat(255),
  'a'.repeat(256),
  'k y',
  '\xe9',
  '\t',
];

function idempotencyKeyArbitrary(): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...IDEMPOTENCY_KEYS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 300 }).map(printable) },
  );
}

const FORWARDED = ['1.2.3.4', 'garbage', '::1', '999.999.1.1', ', ,', 'unknown', '[::1]:80', '1.2.3.4, 5.6.7.8', '-'];

/** Headers besides Authorization and Content-Type: each one present or not. */
function otherHeadersArbitrary(options: FuzzOptions): fc.Arbitrary<Record<string, string | undefined>> {
  const expect = pick<string | undefined>(options, [
    { weight: 20, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom('100-continue', '100-Continue') },
    { weight: 1, arbitrary: fc.constantFrom('something', '200-ok', ''), defect: 'expectOther' },
  ]);
  return fc.record({
    'idempotency-key': idempotencyKeyArbitrary(),
    expect,
    'x-forwarded-for': sometimes(
      fc.oneof(
        fc.constantFrom(...FORWARDED),
        fc.string({ unit: 'binary-ascii', maxLength: 200 }).map(printable),
        fc.integer({ min: 100, max: 2000 }).map((length) => '1.'.repeat(length)),
      ),
      4,
    ),
    'content-encoding': sometimes(fc.constantFrom('gzip', 'identity', 'br', 'IDENTITY', '', 'g'.repeat(3000)), 12),
    'transfer-encoding': sometimes(fc.constant('chunked'), 8),
    accept: sometimes(fc.constantFrom('application/xml', '*/*', 'text/html', ''), 6),
    host: sometimes(fc.constantFrom('', 'evil.example', 'a'.repeat(300), '[::1', 'h:99999'), 12),
    origin: sometimes(fc.constantFrom('https://evil.example', 'null'), 12),
    'x-long': sometimes(
      fc
        .oneof(
          { weight: 5, arbitrary: fc.integer({ min: 1000, max: 9000 }) },
          { weight: 1, arbitrary: fc.integer({ min: 17000, max: 30000 }) },
        )
        .map((length) => 'v'.repeat(length)),
      10,
    ),
  });
}

/** `arbitrary` in one case out of `oneIn`, otherwise undefined (the header or field is absent). */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

// -------------------------------------------------------------------- bodies

interface BodyCase {
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
function newPetText(options: FuzzOptions): fc.Arbitrary<BodyCase> {
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

// ------------------------------------------------------------------ requests

export function fuzzRequestArbitrary(options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ weight: 7, arbitrary: anyRequest(options) }, { weight: 3, arbitrary: creation(options) });
}

/** A creation with a valid key and media type, whose body is the only thing varied. */
function creation(options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      contentType: pick(options, [
        { weight: 12, arbitrary: fc.constantFrom(...MEDIA_TYPES) },
        { weight: 1, arbitrary: fc.constantFrom(...FOREIGN_CHARSETS), defect: 'foreignCharset' },
      ]),
      idempotencyKey: sometimes(fc.uuid(), 3),
      body: newPetText(options),
    })
    .map(({ contentType, idempotencyKey, body }) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.keys.unlimited}`,
        'content-type': contentType,
      };
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const tags = FOREIGN_CHARSETS.includes(contentType) ? [...body.tags, 'foreignCharset' as const] : body.tags;
      return { method: 'POST', path: '/v1/pets', headers, body: body.bytes, intent: body.intent, tags };
    });
}

function anyRequest(options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: methodArbitrary(options),
      path: pathArbitrary(options.keys),
      authorization: authorizationArbitrary(options),
      contentType: contentTypeArbitrary(options),
      others: otherHeadersArbitrary(options),
      body: bodyArbitrary(options),
    })
    .map(({ method, path, authorization, contentType, others, body }) => {
      const headers: Record<string, string | readonly string[]> = {};
      if (authorization !== undefined) headers.authorization = authorization;
      if (contentType !== undefined && body.bytes !== undefined) headers['content-type'] = contentType;
      for (const [name, value] of Object.entries(others)) if (value !== undefined) headers[name] = value;
      const tags = new Set<DefectClass>(body.bytes === undefined ? [] : body.tags);
      if (Array.isArray(authorization)) tags.add('duplicateAuthorization');
      if (typeof contentType === 'string' && FOREIGN_CHARSETS.includes(contentType)) tags.add('foreignCharset');
      if (others.expect !== undefined && !/^100-continue$/i.test(others.expect)) tags.add('expectOther');
      if (method === 'CONNECT') tags.add('connect');
      if (UNLISTED_METHODS.includes(method)) tags.add('unlistedMethod');
      const intent = body.bytes === undefined ? 'unknown' : body.intent;
      return { method, path, headers, body: body.bytes, intent, tags: [...tags] };
    });
}

// -------------------------------------------------------------------- sender

/** Methods node:http would change (upper-case) or refuse, and paths it refuses, go into the request line directly. */
function needsWireMethod(method: string, path: string): boolean {
  return method === 'CONNECT' || !/^[A-Z-]+$/.test(method) || /[^\x21-\xff]/.test(path);
}

/**
 * node:http upper-cases methods and refuses some tokens; the request line is rewritten in the
 * first write on the socket so the server sees the method exactly as generated.
 */
function rewriteRequestLine(socket: Socket, method: string, path: string): Socket {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let first = true;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!first) return write(chunk, ...rest);
    first = false;
    const data = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('latin1');
    const rewritten = data.replace(/^[^\r\n]*/, `${method} ${path} HTTP/1.1`);
    const encoding = typeof rest[0] === 'string' ? rest.slice(1) : rest;
    return write(rewritten, 'latin1', ...encoding);
  }) as Socket['write'];
  return socket;
}

export class NoAnswerError extends Error {}

/** Sends one request on a fresh connection and reads the whole answer, or rejects after `timeoutMs`. */
export function sendFuzzRequest(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  const { hostname, port } = new URL(baseUrl);
  if (fuzz.method === 'HEAD') return sendHeadRequest(hostname, Number(port), fuzz, timeoutMs);
  const wire = needsWireMethod(fuzz.method, fuzz.path);
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: hostname,
      port: Number(port),
      method: wire ? 'GET' : fuzz.method,
      path: wire ? '/' : fuzz.path,
      headers: withLength(fuzz),
      // Without an agent, node:http uses createConnection; with agent: false it would ignore it.
      agent: wire ? undefined : false,
      createConnection: wire
        ? () => rewriteRequestLine(connect(Number(port), hostname), fuzz.method, fuzz.path)
        : undefined,
    });
    const timer = setTimeout(() => {
      request.destroy(new NoAnswerError(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error instanceof NoAnswerError ? error : new NoAnswerError(`no answer: ${error.message}`));
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        request.destroy();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) });
      });
    });
    // A server may answer before the body is sent (401, 413) and close: that write error is not a failure.
    request.on('socket', (socket) => socket.on('error', () => undefined));
    request.end(fuzz.body === undefined ? undefined : Buffer.from(fuzz.body));
  });
}

/** node:http sends a GET or DELETE body without Content-Length, which the server would read as a second request. */
function withLength(fuzz: FuzzRequest): Record<string, string | string[]> {
  const headers = { ...fuzz.headers } as Record<string, string | string[]>;
  if (fuzz.body !== undefined && headers['transfer-encoding'] === undefined) {
    headers['content-length'] = String(fuzz.body.length);
  }
  return headers;
}

/**
 * HEAD goes over a bare socket, read until the server closes it: its status, and as its body
 * whatever follows the final answer's head, which must be nothing (node:http's client would take
 * such bytes for a broken answer rather than show them).
 */
function sendHeadRequest(host: string, port: number, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => socket.end(headRequestBytes(fuzz, `${host}:${port}`)));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new NoAnswerError(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const statuses = [...raw.toString('latin1').matchAll(/^HTTP\/1\.[01] (\d{3})/gm)];
      const final = statuses.find((match) => Number(match[1]) >= 200);
      if (final === undefined) return reject(new NoAnswerError('no answer: the connection closed without a status'));
      const headEnd = raw.indexOf('\r\n\r\n', final.index);
      const body = headEnd < 0 ? Buffer.alloc(0) : raw.subarray(headEnd + 4);
      resolve({ status: Number(final[1]), headers: {}, body });
    });
  });
}

function headRequestBytes(fuzz: FuzzRequest, defaultHost: string): Buffer {
  const lines = [`HEAD ${fuzz.path} HTTP/1.1`];
  const headers: Record<string, string | readonly string[]> = { host: defaultHost, ...fuzz.headers };
  for (const [name, value] of Object.entries(headers)) {
    for (const one of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${one}`);
  }
  lines.push('connection: close');
  const body = fuzz.body === undefined ? Buffer.alloc(0) : Buffer.from(fuzz.body);
  const chunked = typeof headers['transfer-encoding'] === 'string';
  if (chunked) {
    const chunk = body.length === 0 ? '' : `${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n`;
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${chunk}0\r\n\r\n`, 'latin1');
  }
  if (fuzz.body !== undefined) lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

// ------------------------------------------------------------------ property

/**
 * The property: 2xx, or the Error body repeating the status with a known code; never a 5xx but 503,
 * and 501 for a method HTTP does not know. An answer to HEAD has no body at all.
 */
export function judge(fuzz: FuzzRequest, answer: FuzzAnswer): Verdict {
  const { status } = answer;
  const fail = (problem: string): Verdict => ({ ok: false, status, problem });
  if (fuzz.method === 'HEAD' && answer.body.length > 0) return fail(`a ${status} to HEAD with a body`);
  const unknownMethod = !METHODS.includes(fuzz.method);
  if (status >= 500 && status !== 503 && !(status === 501 && unknownMethod)) return fail(`a ${status}`);
  if (status >= 200 && status < 300) {
    const refusal = mustBeRefused(fuzz);
    if (refusal !== undefined) return fail(`a ${status} for ${refusal}`);
    return { ok: true, status };
  }
  if (fuzz.method === 'HEAD') return { ok: true, status };
  // The documentation UI redirects to its own pages; a redirect names its target and carries no error.
  if (status >= 300 && status < 400 && answer.headers.location !== undefined) return { ok: true, status };
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return fail(answer.body.length === 0 ? `a ${status} without a body` : `a ${status} whose body is not JSON`);
  }
  const shape = errorBodyProblem(body, status);
  if (shape !== undefined) return fail(`a ${status} with ${shape}`);
  const { code } = body as { code: string };
  if (status === 501 && code !== 'method_not_implemented') return fail(`a 501 with ${code}`);
  if (status === 404 && isKnownV1Path(fuzz.path) && !['GET', 'HEAD'].includes(fuzz.method))
    return fail('a 404 for a method other than GET/HEAD on a v1 path (405 expected)');
  return { ok: true, status, code };
}

/** What makes a request one the interface refuses, as far as the generator knows. */
function mustBeRefused(fuzz: FuzzRequest): string | undefined {
  if (!isKnownV1Path(fuzz.path)) return undefined;
  if (Array.isArray(fuzz.headers.authorization)) return 'a request with two Authorization headers';
  if (fuzz.method !== 'POST' || fuzz.body === undefined) return undefined;
  const type = fuzz.headers['content-type'];
  if (typeof type === 'string' && FOREIGN_CHARSETS.includes(type))
    return 'a body declared in a charset other than UTF-8';
  if (fuzz.intent === 'invalid') return 'a body the interface refuses';
  return undefined;
}

function errorBodyProblem(body: unknown, status: number): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'a body that is not an object';
  const record = body as Record<string, unknown>;
  const keys = Object.keys(record).sort().join(',');
  if (keys !== 'code,message,status') return `fields ${keys} instead of code, message, status`;
  if (typeof record.code !== 'string' || !ERROR_CODES.has(record.code)) return 'an unknown code';
  if (record.status !== status) return 'a status field unlike the HTTP status';
  if (typeof record.message !== 'string' || record.message.length === 0) return 'an empty message';
  if (record.message.length > MESSAGE_MAX_CHARS) return `a message over ${MESSAGE_MAX_CHARS} characters`;
  return undefined;
}

/** Paths the router matches to a v1 resource, whatever the id segment says. */
function isKnownV1Path(path: string): boolean {
  return /^\/v1\/pets(\/[^/?#]+)?(\?.*)?$/.test(path);
}

// ------------------------------------------------------------------ tallying

/** Counts of answers per status and per code over a run, and the failures it saw, per class. */
export class FuzzTally {
  readonly statuses = new Map<string, number>();
  readonly codes = new Map<string, number>();
  readonly failures = new Map<string, { count: number; example: FuzzRequest }>();
  cases = 0;

  record(fuzz: FuzzRequest, verdict: Verdict): void {
    this.cases += 1;
    bump(this.statuses, String(verdict.status));
    if (verdict.ok && verdict.code !== undefined) bump(this.codes, verdict.code);
    if (!verdict.ok) {
      const known = this.failures.get(failureClass(verdict));
      if (known) known.count += 1;
      else this.failures.set(failureClass(verdict), { count: 1, example: fuzz });
    }
  }

  summary(): string {
    const lines = [`cases: ${this.cases}`, `per status: ${format(this.statuses)}`, `per code: ${format(this.codes)}`];
    for (const [name, { count }] of this.failures) lines.push(`failure class (${count}): ${name}`);
    return lines.join('\n');
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function format(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key}=${count}`)
    .join(' ');
}

/** A failure's class: what was wrong, without the input's details, so one defect is one class. */
export function failureClass(verdict: Verdict & { ok: false }): string {
  return verdict.problem;
}

/** One case, sent and judged; a transport failure (hang, reset, no answer) is a failed verdict too. */
export async function runCase(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<Verdict> {
  try {
    return judge(fuzz, await sendFuzzRequest(baseUrl, fuzz, timeoutMs));
  } catch (error) {
    if (!(error instanceof NoAnswerError))
      return { ok: false, status: 'none', problem: `client error: ${String(error)}` };
    const hang = error.message.includes('within');
    return { ok: false, status: 'none', problem: hang ? 'no answer in time' : 'no answer: the connection closed' };
  }
}

/** A readable, bounded rendering of a request for reports. */
export function describeRequest(fuzz: FuzzRequest): string {
  const clip = (value: string): string => (value.length > 120 ? `${value.slice(0, 120)}…(${value.length})` : value);
  const headers = Object.entries(fuzz.headers)
    .map(([name, value]) => `${name}: ${clip(JSON.stringify(value))}`)
    .join('; ');
  const body = fuzz.body === undefined ? 'none' : clip(JSON.stringify(Buffer.from(fuzz.body).toString('latin1')));
  return `${fuzz.method} ${clip(JSON.stringify(fuzz.path))} | ${headers} | body ${body}`;
}

// ------------------------------------------------------------------- target

export interface FuzzTarget {
  readonly app: TestApp;
  readonly keys: FuzzKeys;
}

/**
 * The app (on SQLite unless `backend` says otherwise) with limits no run reaches, except for the `limited`
 * key (20 a minute): an enterprise key holding every scope and an anonymous limit far above a run's size, so
 * 401s and validation are not masked by 429s or 403s.
 * Forwarded addresses are trusted, so garbage X-Forwarded-For values reach the limiter.
 */
export async function startFuzzTarget(backend?: BackendPair): Promise<FuzzTarget> {
  const env = { ANON_LIMIT_PER_MINUTE: '100000000', TRUST_PROXY: '127.0.0.1' };
  const app = await startTestApp({ env, ...(backend === undefined ? {} : { backend }) });
  // Every scope, keys:manage included, so that the holder's key operations are reached past their scope check.
  const unlimited = await app.newKey({
    plan: 'enterprise',
    perMinute: 100_000_000,
    perDay: 1_000_000_000,
    scopes: KEY_SCOPES,
  });
  const limited = await app.newKey({ plan: 'enterprise', perMinute: 20, perDay: 1_000_000 });
  return { app, keys: { unlimited: unlimited.key, limited: limited.key } };
}

/** The property as fast-check runs it: one request per case; failures of `tolerated` classes only count. */
export function fuzzProperty(
  target: FuzzTarget,
  tally: FuzzTally,
  settings: {
    readonly timeoutMs: number;
    readonly exclude?: ReadonlySet<DefectClass>;
    tolerated?: ReadonlySet<string>;
  },
): fc.IAsyncPropertyWithHooks<[FuzzRequest]> {
  const arbitrary = fuzzRequestArbitrary({ keys: target.keys, exclude: settings.exclude });
  return fc.asyncProperty(arbitrary, async (fuzz) => {
    const verdict = await runCase(target.app.url, fuzz, settings.timeoutMs);
    tally.record(fuzz, verdict);
    if (verdict.ok) return;
    const name = failureClass(verdict);
    if (settings.tolerated?.has(name)) return;
    throw new FuzzFailure(name, fuzz);
  });
}

export class FuzzFailure extends Error {
  readonly failureClass: string;
  constructor(failureClass: string, fuzz: FuzzRequest) {
    super(`${failureClass}\n  request: ${describeRequest(fuzz)}`);
    this.failureClass = failureClass;
  }
}
