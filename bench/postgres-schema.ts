import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A PostgreSQL database URL for one benchmark run, and how to remove what the run left there. */
export interface BenchDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * The benchmark seeds 10,000 pets and an account: on PostgreSQL they go into a schema of their
 * own, `petstore_bench_<random>`, selected with the libpq `options` parameter as an operator would
 * select one, and dropped at the end, so a run leaves the database as it found it. A URL that
 * already names its schema (`options=…`) is used as it is, and kept.
 */
export async function benchDatabase(baseUrl: string): Promise<BenchDatabase> {
  if (new URL(baseUrl).searchParams.has('options')) return { url: baseUrl, drop: async () => undefined };
  const schema = `petstore_bench_${randomBytes(6).toString('hex')}`;
  await withClient(baseUrl, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const separator = baseUrl.includes('?') ? '&' : '?';
  return {
    url: `${baseUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: () =>
      withClient(baseUrl, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
