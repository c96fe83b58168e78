import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * A schema of its own for one server's seed, `petstore_bench_<random>`, selected with libpq's
 * `options` parameter as an operator would select one; returns its URL and how to drop it.
 */
export async function createBenchSchema(baseUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `petstore_bench_${randomBytes(6).toString('hex')}`;
  const query = async (sql: string): Promise<void> => {
    const client = new Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await query(`CREATE SCHEMA ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}
