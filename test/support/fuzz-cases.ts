import fc from 'fast-check';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * What a fuzz case is (test/support/fuzz-model.ts has the property it is judged by): a whole HTTP
 * request as written on the wire, what its body was meant to be, and the known defects it may
 * trigger; and the choices the generators (fuzz-generators.ts, fuzz-bodies.ts) share.
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

export const MEDIA_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'APPLICATION/JSON',
  'application/json;charset="utf-8"',
  'Application/Json ; Charset=utf-8',
];
export const FOREIGN_CHARSETS = [
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=iso-8859-1',
  'application/json; charset=ascii',
  'application/json; charset=',
  'application/json; charset=nonsense',
];

/** Chooses among `choices`, leaving out those whose defect class is excluded. */
export function pick<T>(
  options: FuzzOptions,
  choices: ReadonlyArray<{ weight: number; arbitrary: fc.Arbitrary<T>; defect?: DefectClass }>,
): fc.Arbitrary<T> {
  const kept = choices.filter((choice) => choice.defect === undefined || !options.exclude?.has(choice.defect));
  return fc.oneof(...kept.map(({ weight, arbitrary }) => ({ weight, arbitrary })));
}

/** UTF-8 bytes of `text` as a latin1 string, so node:http writes them unchanged. */
export function utf8OnTheWire(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Characters node:http accepts in a header value. */
export function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

/** `arbitrary` in one case out of `oneIn`, otherwise undefined (the header or field is absent). */
export function sometimes<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}
