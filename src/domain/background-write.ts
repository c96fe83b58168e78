/**
 * Background writes (last-used times, and any other batch a timer writes) never queue behind or in
 * front of requests, so no request ever waits for one.
 * - `if-idle` (the default; every interval): tried only if storage can take it at once. On SQLite,
 *   this process's writer must be free, or nothing is written and the call resolves false; another
 *   process holding the file's write lock refuses every write, and the call rejects at once with
 *   StorageUnavailableError; nothing waits. On PostgreSQL, a pooled connection must be free without
 *   queueing for it, or the call resolves false; the write then holds it for its statements only,
 *   bounded by the storage timeout like any call.
 * - `waiting` (the last flush at shutdown, when no request is left to hold up): waits as a request
 *   does, up to the storage timeout.
 * The caller keeps a batch that was not written (false, or StorageUnavailableError), merged with
 * newer values, for its next try.
 */
export type BackgroundWrite = 'if-idle' | 'waiting';
