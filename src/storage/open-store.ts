import type { Config } from '../config.ts';
import { openSqliteStore } from './sqlite-dialect.ts';
import type { Store } from '../domain/store.ts';

export interface OpenStoreOptions {
  /**
   * Told about errors of idle PostgreSQL connections (e.g. the server restarted). The pool has
   * already dropped the connection and opens a new one on the next query; this is for logging.
   */
  readonly onIdleError?: (error: Error) => void;
}

/** Picks the backend from DATABASE_URL: `sqlite:PATH` or `postgres://…` / `postgresql://…`. */
export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'pgPoolSize' | 'storageTimeoutMs'>,
  options: OpenStoreOptions = {},
): Promise<Store> {
  const url = config.databaseUrl;
  if (url.startsWith('sqlite:')) {
    return openSqliteStore(url.slice('sqlite:'.length), { timeoutMs: config.storageTimeoutMs });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Loaded only when used, so a SQLite deployment never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres-dialect.ts');
    return openPostgresStore(url, {
      poolSize: config.pgPoolSize,
      timeoutMs: config.storageTimeoutMs,
      ...(options.onIdleError ? { onIdleError: options.onIdleError } : {}),
    });
  }
  throw new Error(
    `unsupported DATABASE_URL scheme: use sqlite:PATH or postgres://… (got ${JSON.stringify(url.split(':')[0])})`,
  );
}
