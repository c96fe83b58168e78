import type { Config } from '../config.ts';
import { openSqliteStore } from './sqlite-store.ts';
import type { Store } from './store.ts';

/** Picks the backend from DATABASE_URL: `sqlite:PATH` or `postgres://…` / `postgresql://…`. */
export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'pgPoolSize' | 'storageTimeoutMs'>,
): Promise<Store> {
  const url = config.databaseUrl;
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Loaded only when used, so a SQLite deployment never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres-store.ts');
    return openPostgresStore(url, { poolSize: config.pgPoolSize, timeoutMs: config.storageTimeoutMs });
  }
  throw new Error(
    `unsupported DATABASE_URL scheme: use sqlite:PATH or postgres://… (got ${JSON.stringify(url.split(':')[0])})`,
  );
}
