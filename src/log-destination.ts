import { pino, type DestinationStream } from 'pino';

/** Bytes of log lines gathered before they are written at once. */
const MIN_WRITE_BYTES = 4096;
/** The longest a line waits in memory when traffic is too light to fill a write. */
const MAX_DELAY_MS = 1000;

/** Makes the destination of the log lines written to a file descriptor. */
export type LogDestinationFactory = (fd: number) => DestinationStream;

/**
 * pino's asynchronous destination: lines are gathered into 4 KiB writes instead of one write(2) per
 * line, written at least once a second, and on shutdown when the logger is flushed.
 */
const plainDestination: LogDestinationFactory = (fd) => {
  const stream = pino.destination({ dest: fd, minLength: MIN_WRITE_BYTES, sync: false });
  setInterval(() => stream.flush(), MAX_DELAY_MS).unref();
  return stream;
};

let factory = plainDestination;

/**
 * Makes every later logDestination() with `make`: how src/platform/ puts a faster destination in
 * place, from its one import in src/server.ts.
 */
export function useLogDestination(make: LogDestinationFactory): void {
  factory = make;
}

/** The destination of the log lines written to `fd`. */
export function logDestination(fd: number): DestinationStream {
  return factory(fd);
}
