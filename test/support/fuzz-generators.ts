import fc from 'fast-check';
import { bodyArbitrary, newPetText } from './fuzz-bodies.ts';
import {
  FOREIGN_CHARSETS,
  MEDIA_TYPES,
  pick,
  printable,
  sometimes,
  utf8OnTheWire,
  type DefectClass,
  type FuzzKeys,
  type FuzzOptions,
  type FuzzRequest,
} from './fuzz-cases.ts';

/**
 * Generators of whole HTTP requests for the fuzz model: methods, paths with odd ids and queries,
 * headers, and a body (fuzz-bodies.ts). They lean towards requests that get past authentication and
 * parsing, so the deeper steps (validation, storage, idempotency) see most of the cases.
 */

const KEY_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

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
