import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A database URL whose connections work in a schema of their own, and how to drop that schema. */
export interface BenchSchema {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * Seeds go into `petstore_bench_<random>`, selected with libpq's `options` parameter as an operator
 * would select a schema, and dropped at the end, so a run leaves the database as it found it.
 */
export async function createBenchSchema(baseUrl: string): Promise<BenchSchema> {
  const schema = `petstore_bench_${randomBytes(6).toString('hex')}`;
  await query(baseUrl, `CREATE SCHEMA ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => query(baseUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

async function query(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
