import { pino } from 'pino';

/** What the log destination writes to: sonic-boom in buffer mode, as pino.destination() makes it. */
export interface LineStream {
  write(chunk: Buffer): unknown;
  flush(callback?: (error?: Error) => void): void;
}

export interface LogDestinationOptions {
  /** Pending text, in characters, that is handed to the stream at once. */
  readonly chunkChars?: number;
  /** The longest a line waits in memory. */
  readonly maxDelayMs?: number;
}

/**
 * Where every log line goes, the access log's and pino's alike (so they keep their order): lines
 * gather in memory and reach the stream in chunks of 16 KiB, and at least every second.
 * Hand-written because sonic-boom's own buffering measures the UTF-8 length of its whole pending
 * chunk on each write, which with one access-log line per request cost about 15% of a cached GET's
 * throughput in `npm run bench`; here a line costs one string append.
 */
export class LogDestination {
  readonly #stream: LineStream;
  readonly #chunkChars: number;
  readonly #timer: NodeJS.Timeout;
  #pending = '';

  constructor(stream: LineStream, options: LogDestinationOptions = {}) {
    this.#stream = stream;
    this.#chunkChars = options.chunkChars ?? 16 * 1024;
    this.#timer = setInterval(() => this.#handOver(), options.maxDelayMs ?? 1000);
    this.#timer.unref();
  }

  /** Writes to standard output without blocking the event loop. */
  static forStdout(): LogDestination {
    return new LogDestination(asyncFileStream(1));
  }

  write(line: string): boolean {
    this.#pending += line;
    if (this.#pending.length >= this.#chunkChars) this.#handOver();
    return true;
  }

  /** Hands over everything pending; `callback` runs once the stream has written it. */
  flush(callback?: (error?: Error) => void): void {
    this.#handOver();
    this.#stream.flush(callback);
  }

  #handOver(): void {
    if (this.#pending === '') return;
    const chunk = this.#pending;
    this.#pending = '';
    this.#stream.write(Buffer.from(chunk));
  }
}

/**
 * sonic-boom on `fd`, asynchronous, in buffer mode: a chunk is encoded once here, where its utf8
 * mode would measure the string twice. minLength 1 writes what it is handed at once, and still
 * makes flush() wait for the write in flight.
 */
export function asyncFileStream(fd: number): LineStream {
  const stream = pino.destination({ dest: fd, sync: false, minLength: 1, contentMode: 'buffer' });
  // Its typings only describe utf8 mode; in buffer mode write() takes Buffers.
  const write = stream.write.bind(stream) as unknown as (chunk: Buffer) => boolean;
  return { write, flush: (callback) => stream.flush(callback) };
}
