import type { Config } from '../config.ts';
import { openSqliteStore } from './sqlite-store.ts';
import type { Store } from './store.ts';

/** Picks the backend from DATABASE_URL: `sqlite:PATH` or `postgres://…`. */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'pgPoolSize' | 'storageTimeoutMs'>): Promise<Store> {
  const url = config.databaseUrl;
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length));
  throw new Error('PostgreSQL storage is not built yet (issue 4); use DATABASE_URL=sqlite:PATH');
}
