import { hostname } from 'node:os';

/** One line per answered request, in the same JSON shape as the rest of the log. */
export interface AccessLogEntry {
  readonly reqId: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly ms: number;
  /** The key's non-secret id; never the key. */
  readonly keyId: string | undefined;
}

export type AccessLog = (entry: AccessLogEntry) => void;

export interface LineSink {
  write(line: string): unknown;
}

/**
 * Writes access-log lines straight to the log destination, shaped like pino's own lines (level 30,
 * time, pid, hostname, msg). Hand-written because this runs once per request: building the line
 * with a template costs a fraction of a pino call, which measured 20% of list throughput in
 * `npm run bench`. Only non-secret fields are written, so no redaction is needed.
 */
export function createAccessLog(sink: LineSink): AccessLog {
  const fixed = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  return (entry) => {
    const key = entry.keyId === undefined ? '' : `,"key":${JSON.stringify(entry.keyId)}`;
    sink.write(
      `{"level":30,"time":${Date.now()},${fixed},"reqId":${JSON.stringify(entry.reqId)},"method":${JSON.stringify(entry.method)},` +
        `"url":${JSON.stringify(entry.url)},"status":${entry.status},"ms":${entry.ms}${key},"msg":"request"}\n`,
    );
  };
}
