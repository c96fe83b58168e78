import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { ReadStream } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import {
  COMPRESSION_THRESHOLD_BYTES,
  compressNow,
  Representation,
  type ContentCoding,
} from '../../net/representation.ts';
// The reply's `representation`, which sendKept sets and the hook reads, is declared with sendKept.
import '../kept-reply.ts';

type OnSendDone = (error?: Error | null, payload?: unknown) => void;

/**
 * Conditional requests and compression, in one onSend hook for every response. Registered before
 * any route, so that every route's answers go through it:
 *
 * - A body that never changes (a cached pet or page sent by sendKept; a public document) is a
 *   Representation: it gets its ETag, a 304 when If-None-Match matches, and its compressed bytes,
 *   made once per coding and kept with it.
 * - Any other body of 1 KB or more is compressed for its response alone.
 *
 * Bodies of 1 KB or more carry `Vary: Accept-Encoding`, whether compressed this time or not. With no
 * Accept-Encoding and no If-None-Match, a kept body costs a WeakMap lookup and a header or two.
 */
export const contentCoding = fastifyPlugin(
  async (app: FastifyInstance) => {
    const documents = new DocumentRepresentations();
    app.decorateReply('representation', undefined);
    app.addHook('onSend', (request, reply, payload, done: OnSendDone) => {
      if (reply.statusCode === 200) {
        const kept = reply.representation;
        if (kept !== undefined) return sendRepresentation(request, reply, kept, done);
        if (request.routeOptions.config.cacheable === true) {
          if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
            const document = documents.ofBody(request.routeOptions.url, payload);
            return sendRepresentation(request, reply, document, done);
          }
          // A file of the reference page, streamed by @fastify/static: read once, then kept.
          if (isFileStream(payload)) {
            documents.ofFile(reply, payload).then(
              (found) => (found ? sendRepresentation(request, reply, found, done) : done()),
              (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
            );
            return;
          }
        }
      }
      compressForThisResponse(request, reply, payload, done);
    });
  },
  { name: 'content-coding' },
);

const AVAILABLE = ['br', 'gzip', 'identity'];
/** Accept-Encoding values seen, with the coding chosen for each: clients send few distinct ones. */
const negotiated = new LRUCache<string, ContentCoding | 'identity'>({ max: 64 });
/** Longer values are negotiated each time rather than kept. */
const NEGOTIATION_CACHE_KEY_MAX = 200;

/**
 * The coding to send by the request's Accept-Encoding (RFC 9110 12.5.3, q-values, `*` and
 * `identity;q=0` included), br before gzip when the client likes both alike; undefined: identity.
 * When nothing the service has is acceptable (`identity;q=0` alone), identity is sent all the same,
 * as RFC 9110 allows, rather than a 406.
 */
function negotiatedCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (acceptEncoding === undefined) return undefined;
  let choice = negotiated.get(acceptEncoding);
  if (choice === undefined) {
    const best = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encoding(AVAILABLE, {
      preferred: AVAILABLE,
    });
    choice = best === 'br' || best === 'gzip' ? best : 'identity';
    if (acceptEncoding.length <= NEGOTIATION_CACHE_KEY_MAX) negotiated.set(acceptEncoding, choice);
  }
  return choice === 'identity' ? undefined : choice;
}

function sendRepresentation(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation,
  done: OnSendDone,
): void {
  if (!representation.compressible) return answer(request, reply, representation, undefined, done);
  varyOnAcceptEncoding(reply);
  const coding = negotiatedCoding(request.headers['accept-encoding']);
  if (coding === undefined) return answer(request, reply, representation, undefined, done);
  const uncompressed = (error: unknown): void => {
    request.log.error({ err: error }, 'compression failed; the body is sent uncompressed');
    answer(request, reply, representation, undefined, done);
  };
  if (representation.needsCompressionOffLoop(coding)) {
    representation
      .codedLater(coding)
      .then((bytes) => answer(request, reply, representation, bytes ? coding : undefined, done), uncompressed);
    return;
  }
  let coded: Buffer | null;
  try {
    coded = representation.codedNow(coding);
  } catch (error) {
    return uncompressed(error);
  }
  answer(request, reply, representation, coded ? coding : undefined, done);
}

/** Sends the representation in `coding` (compressed already), or 304 when If-None-Match matches it. */
function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  representation: Representation,
  coding: ContentCoding | undefined,
  done: OnSendDone,
): void {
  const coded = coding === undefined ? undefined : (representation.codedIfReady(coding) as Buffer);
  const body = coded ?? representation.identity;
  const size = coded?.length ?? representation.size;
  reply.header('etag', representation.etagOf(coding));
  const condition = request.headers['if-none-match'];
  if (condition !== undefined && representation.isMatchedBy(condition))
    return notModified(request, reply, body, size, done);
  if (coding !== undefined) reply.header('content-encoding', coding);
  // Set by @fastify/static for the file it was about to stream.
  if (reply.hasHeader('content-length')) reply.header('content-length', String(size));
  done(null, body);
}

/**
 * 304 with the headers the 200 would carry (ETag, Vary, Cache-Control, rate limits, deprecation,
 * request id) but no body and no metadata of one. HEAD passes the body on so that Fastify's HEAD
 * handling sends the 200's Content-Length, which RFC 9110 8.6 allows on a 304.
 */
function notModified(
  request: FastifyRequest,
  reply: FastifyReply,
  body: Buffer | string,
  size: number,
  done: OnSendDone,
): void {
  reply.code(304);
  reply.removeHeader('content-type');
  reply.removeHeader('content-length');
  reply.removeHeader('accept-ranges');
  if (request.method !== 'HEAD') return done(null, null);
  reply.header('content-length', String(size));
  done(null, body);
}

/**
 * Compresses a body of 1 KB or more for this response alone, when the client accepts a coding. On
 * the event loop: these are the service's own JSON answers, a few kilobytes (about 0.1 ms for a
 * 100-pet page), and a hook that waits would let Fastify answer some requests twice (see
 * SYNC_COMPRESSION_MAX_BYTES in src/net/representation.ts).
 */
function compressForThisResponse(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: OnSendDone,
): void {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done();
  const size = byteLengthIfLarge(payload);
  if (size === undefined) return done();
  varyOnAcceptEncoding(reply);
  if (reply.statusCode === 206 || reply.hasHeader('content-encoding')) return done();
  const coding = negotiatedCoding(request.headers['accept-encoding']);
  if (coding === undefined) return done();
  let bytes: Buffer;
  try {
    bytes = compressNow(payload, coding, false);
  } catch (error) {
    request.log.error({ err: error }, 'compression failed; the body is sent uncompressed');
    return done();
  }
  if (bytes.length >= size) return done();
  reply.header('content-encoding', coding);
  if (reply.hasHeader('content-length')) reply.header('content-length', String(bytes.length));
  done(null, bytes);
}

/** The body's size in bytes when it reaches the threshold, counted only where the length leaves it open. */
function byteLengthIfLarge(payload: string | Buffer): number | undefined {
  if (Buffer.isBuffer(payload)) return payload.length >= COMPRESSION_THRESHOLD_BYTES ? payload.length : undefined;
  // A UTF-16 code unit is one to three bytes of UTF-8.
  if (payload.length * 3 < COMPRESSION_THRESHOLD_BYTES) return undefined;
  const size = Buffer.byteLength(payload);
  return size >= COMPRESSION_THRESHOLD_BYTES ? size : undefined;
}

/** Adds Accept-Encoding to Vary, after what is there (CORS puts Origin). */
function varyOnAcceptEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`);
}

interface DocumentEntry {
  /** What the entry was made from: the handler's text or bytes, or the file's validator. */
  readonly source: string | Buffer;
  readonly representation: Representation;
}

/** Versions kept per route: /docs and /docs/ are one route with two pages. */
const VERSIONS_PER_ROUTE = 4;

/**
 * The public documents (/v1/openapi.json aside, which keeps its own bytes): each answer becomes a
 * Representation, kept per route, or per file for @fastify/static's files, so that each is
 * compressed once per process. An entry is reused only for the same content: the same text or
 * bytes from the handler, or the same file size and time (@fastify/send's ETag). Keys are routes
 * and files, never raw URLs, so what is kept is bounded by the files and routes there are.
 */
class DocumentRepresentations {
  private readonly byRoute = new Map<string, DocumentEntry[]>();
  private readonly byFile = new Map<string, Promise<DocumentEntry | undefined>>();

  /** The Representation of a document's text or bytes, kept per route. */
  ofBody(route: string | undefined, body: string | Buffer): Representation {
    const key = route ?? '';
    const entries = this.byRoute.get(key) ?? [];
    const found = entries.find((entry) => sameBody(entry.source, body));
    if (found) return found.representation;
    const representation = new Representation(body);
    this.byRoute.set(key, [{ source: body, representation }, ...entries].slice(0, VERSIONS_PER_ROUTE));
    return representation;
  }

  /** The Representation of a file, kept per file while its validator holds; undefined without one. */
  async ofFile(reply: FastifyReply, stream: ReadStream): Promise<Representation | undefined> {
    const validator = reply.getHeader('etag');
    if (typeof validator !== 'string') return undefined;
    const file = String(stream.path);
    const kept = await this.byFile.get(file);
    let representation: Representation;
    if (kept !== undefined && kept.source === validator) {
      stream.destroy();
      representation = kept.representation;
    } else {
      const reading = buffer(stream).then((bytes) => ({
        source: validator,
        representation: new Representation(bytes),
      }));
      this.byFile.set(
        file,
        reading.catch(() => undefined),
      );
      representation = (await reading).representation;
    }
    // Answered from memory: byte ranges of it are not offered (a Range request still gets @fastify/static's 206).
    reply.removeHeader('accept-ranges');
    return representation;
  }
}

function sameBody(source: string | Buffer, body: string | Buffer): boolean {
  if (typeof source === 'string' || typeof body === 'string') return source === body;
  return source === body || source.equals(body);
}

function isFileStream(payload: unknown): payload is ReadStream {
  return (
    typeof payload === 'object' &&
    payload !== null &&
    'pipe' in payload &&
    'path' in payload &&
    (typeof payload.path === 'string' || Buffer.isBuffer(payload.path))
  );
}
