import { hash } from 'node:crypto';
import {
  brotliCompress,
  brotliCompressSync,
  constants,
  gzip,
  gzipSync,
  type BrotliOptions,
  type ZlibOptions,
} from 'node:zlib';

/** The content codings the service sends besides identity, in its order of preference. */
export type ContentCoding = 'br' | 'gzip';

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * How hard each coding works, measured on the 2-core development VM (brotli quality: bytes, time):
 *
 * - a 100-pet page (6.5 KB): q5 431 B, 0.2 ms; q11 448 B, 4.8 ms. gzip 6: 824 B, 0.1 ms.
 * - the OpenAPI document (41 KB): q5 4.9 KB, 0.5 ms; q11 4.4 KB, 18 ms. gzip 6: 5.5 KB, 0.3 ms.
 * - swagger-ui-bundle.js (1.5 MB): q5 375 KB, 30 ms; q11 334 KB, 2.4 s. gzip 6: 415 KB, 37 ms.
 *
 * Quality 11 gains at most 11% for forty to eighty times the time, and would hold the first load of
 * the reference page for seconds. Kept bodies (compressed once, sent many times) use quality 5;
 * bodies compressed for one response use quality 4, a third cheaper on small pages for a few bytes
 * more. gzip level 9 gains under 1% over zlib's default 6 on all three.
 */
const KEPT_BROTLI_QUALITY = 5;
const PER_RESPONSE_BROTLI_QUALITY = 4;
const GZIP_LEVEL = 6;

/**
 * Bodies up to this size are compressed on the event loop, at most about 2 ms for a kept one; larger
 * ones (the reference page's scripts and styles) on libuv's thread pool. Synchronous where it can
 * be: an onSend hook that waits lets Fastify go on with a request whose answer an onRequest hook
 * or an async handler has already given, and send it twice.
 */
export const SYNC_COMPRESSION_MAX_BYTES = 128 * 1024;

/** Characters of the SHA-256 digest (base64url) an ETag carries: 162 bits. */
const DIGEST_LENGTH = 27;

function brotliOptions(size: number, kept: boolean): BrotliOptions {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: kept ? KEPT_BROTLI_QUALITY : PER_RESPONSE_BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      // Lets the encoder size its window to the body instead of 4 MiB.
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

const GZIP_OPTIONS: ZlibOptions = { level: GZIP_LEVEL };

/** Compresses `body` with `coding` on the event loop. `kept`: compressed once and sent many times. */
export function compressNow(body: Buffer | string, coding: ContentCoding, kept: boolean): Buffer {
  if (coding === 'gzip') return gzipSync(body, GZIP_OPTIONS);
  return brotliCompressSync(body, brotliOptions(Buffer.byteLength(body), kept));
}

/** Compresses `body` with `coding` on libuv's thread pool. */
function compressOffLoop(body: Buffer | string, coding: ContentCoding, kept: boolean): Promise<Buffer> {
  const { promise, resolve, reject } = Promise.withResolvers<Buffer>();
  const done = (error: Error | null, result: Buffer): void => (error ? reject(error) : resolve(result));
  if (coding === 'gzip') gzip(body, GZIP_OPTIONS, done);
  else brotliCompress(body, brotliOptions(Buffer.byteLength(body), kept), done);
  return promise;
}

/**
 * One body that never changes (a cached pet or page, a public document), sent many times: its
 * bytes, its strong ETag, and its compressed forms, each made at most once, when first asked for.
 * keptBody's bodies are their owners' JSON text, not bytes: Node writes a text body in one piece
 * with the headers, where a Buffer takes a second, gathered write (12–18% of a cached read's CPU
 * in `npm run bench`), and the owner holds that text already.
 *
 * The ETag is a digest of the identity bytes, so every instance, and every restart, gives the same
 * content the same tag. Strong validators identify the bytes sent, so each content coding has its
 * own tag: `"<digest>"`, `"<digest>-br"`, `"<digest>-gzip"`. If-None-Match with any of them matches:
 * they all stand for the same content.
 */
export class Representation {
  /** The identity body: its text (keptBody's), or bytes (a file's). */
  readonly identity: Buffer | string;
  /** The identity body's length in bytes. */
  readonly size: number;
  /** Large enough to be worth compressing. */
  readonly compressible: boolean;
  readonly etag: string;
  /** The digest of the identity bytes that the tags are made of. */
  readonly digest: string;
  private readonly brTag: string;
  private readonly gzipTag: string;
  // undefined: not compressed yet; null: compression saved too little, identity is sent instead.
  private br: Buffer | null | undefined = undefined;
  private gzip: Buffer | null | undefined = undefined;
  private brPending: Promise<Buffer | null> | undefined = undefined;
  private gzipPending: Promise<Buffer | null> | undefined = undefined;

  /** `digest`: the digest of these bytes, when known already (keptBody keeps a small body's). */
  constructor(identity: Buffer | string, digest = hash('sha256', identity, 'base64url').slice(0, DIGEST_LENGTH)) {
    this.identity = identity;
    this.size = typeof identity === 'string' ? Buffer.byteLength(identity) : identity.length;
    this.compressible = this.size >= COMPRESSION_THRESHOLD_BYTES;
    this.digest = digest;
    this.etag = `"${this.digest}"`;
    this.brTag = this.compressible ? `"${this.digest}-br"` : this.etag;
    this.gzipTag = this.compressible ? `"${this.digest}-gzip"` : this.etag;
  }

  /** The ETag of the bytes sent with `coding` (undefined: identity). */
  etagOf(coding: ContentCoding | undefined): string {
    if (coding === undefined) return this.etag;
    return coding === 'br' ? this.brTag : this.gzipTag;
  }

  /** The compressed bytes if made already: null when identity is sent instead, undefined when not made yet. */
  codedIfReady(coding: ContentCoding): Buffer | null | undefined {
    return coding === 'br' ? this.br : this.gzip;
  }

  /**
   * Whether the compressed bytes of `coding` must be made on the thread pool first (codedLater):
   * a large body not compressed yet. Otherwise codedNow has them.
   */
  needsCompressionOffLoop(coding: ContentCoding): boolean {
    return this.codedIfReady(coding) === undefined && this.size > SYNC_COMPRESSION_MAX_BYTES;
  }

  /**
   * The compressed bytes (null: identity is sent instead), made on the event loop on the first call
   * for a body up to SYNC_COMPRESSION_MAX_BYTES. For a larger one not made yet, use codedLater.
   */
  codedNow(coding: ContentCoding): Buffer | null {
    const ready = this.codedIfReady(coding);
    if (ready !== undefined) return ready;
    return this.keep(coding, compressNow(this.identity, coding, true));
  }

  /** The compressed bytes of a large body, made on the thread pool once: concurrent first calls share the work. */
  codedLater(coding: ContentCoding): Promise<Buffer | null> {
    if (coding === 'br') return (this.brPending ??= this.compressOffLoop('br'));
    return (this.gzipPending ??= this.compressOffLoop('gzip'));
  }

  /**
   * Whether an If-None-Match value matches this content (RFC 9110 13.1.2): `*`, or a list of
   * entity tags compared weakly (a `W/` prefix is ignored). Tags cannot hold a double quote, so
   * every quoted string in the list is one tag.
   */
  isMatchedBy(ifNoneMatch: string): boolean {
    if (!ifNoneMatch.includes(this.digest)) return ifNoneMatch.trim() === '*';
    for (const match of ifNoneMatch.matchAll(QUOTED)) {
      const tag = match[0];
      if (tag === this.etag || tag === this.brTag || tag === this.gzipTag) return true;
    }
    return false;
  }

  private async compressOffLoop(coding: ContentCoding): Promise<Buffer | null> {
    return this.keep(coding, await compressOffLoop(this.identity, coding, true));
  }

  /**
   * Keeps compressed bytes only when they at least halve the body, which bounds what both codings
   * keep by the identity's size (keptBytesBound); a body that compresses worse goes out as it is.
   * They are copied out of zlib's output, a view of a 64 KiB buffer that would stay alive with them.
   */
  private keep(coding: ContentCoding, bytes: Buffer): Buffer | null {
    const kept = bytes.length * 2 <= this.size ? exactCopy(bytes) : null;
    if (coding === 'br') this.br = kept;
    else this.gzip = kept;
    return kept;
  }
}

const QUOTED = /"[^"]*"/g;

/** The bytes in a buffer of their own: a small Buffer is a view of a shared 64 KiB pool, which any view keeps alive. */
function exactCopy(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * What a kept Representation holds besides its bodies' bytes: the object, its digest and tags, its
 * two WeakMap entries (keptBody), and each Buffer's own objects. Measured by what keeping 500 pages
 * of 20 pets (1.3 KB) added to process.memoryUsage()'s heapUsed and arrayBuffers: 650 bytes with
 * the identity alone, 1,190 with both compressed forms made; counted with some margin.
 */
const REPRESENTATION_OVERHEAD_BYTES = 1280;

/** What a small body keeps with its owner: its digest and the WeakMap's entry for it. */
const KEPT_DIGEST_BYTES = 112;

/**
 * Most bytes keptBody keeps with the owner of an identity body of `identityBytes`: the digest of a
 * body under COMPRESSION_THRESHOLD_BYTES, whose Representation is made for each response; else the
 * object, its tags, and compressed forms that together never exceed the body (each at most half),
 * and the body's size once more, though its text is the owner's own.
 */
export function keptBytesBound(identityBytes: number): number {
  if (identityBytes < COMPRESSION_THRESHOLD_BYTES) return KEPT_DIGEST_BYTES;
  return REPRESENTATION_OVERHEAD_BYTES + 2 * identityBytes;
}

const byOwner = new WeakMap<object, Representation>();
/** The digests of small bodies by their owners: all a small body keeps, since the rest is cheap to make again. */
const digests = new WeakMap<object, string>();

/**
 * The Representation to send for `owner`, an object that never changes (a cached pet or page, a
 * document): the routes send it with sendKept (src/http/kept-reply.ts), and the response hook
 * (src/http/plugins/content-coding.ts) adds the ETag, the coding and the 304.
 *
 * A body of COMPRESSION_THRESHOLD_BYTES or more keeps its Representation with the owner, made on
 * the first call, since its compressed forms are worth making once. A smaller one (a pet) is never
 * compressed, and its text costs a fraction of a microsecond to make again: it keeps only its
 * digest with the owner (computing it again would cost about as much as the rest of the answer), and
 * gets a Representation of its text for this response alone. A body over SYNC_COMPRESSION_MAX_BYTES is
 * compressed on the thread pool, so its handler must return the reply; the pets routes return
 * nothing, which their bodies allow: 100 pets of 200 four-byte characters make about 90 KB.
 */
export function keptBody(owner: object, json: () => string): Representation {
  const kept = byOwner.get(owner);
  if (kept !== undefined) return kept;
  const representation = new Representation(json(), digests.get(owner));
  if (representation.compressible) byOwner.set(owner, representation);
  else digests.set(owner, representation.digest);
  return representation;
}
