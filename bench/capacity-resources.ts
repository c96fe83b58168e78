import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { CleanUp } from './entry.ts';

export function log(message: string): void {
  process.stderr.write(`bench:capacity: ${message}\n`);
}

/** A name no earlier or concurrent run uses: schemas and Redis key prefixes are the run's own. */
export const uniqueName = (stem: string): string => `${stem}_${randomBytes(6).toString('hex')}`;

async function query<T extends object>(databaseUrl: string, text: string): Promise<T[]> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A fresh PostgreSQL schema, dropped at clean-up; the URL selects it with libpq's `options`, as a
 * deployment sharing a database would.
 */
export async function freshSchema(databaseUrl: string, cleanUps: CleanUp[]): Promise<string> {
  const schema = uniqueName('petstore_capacity');
  await query(databaseUrl, `CREATE SCHEMA ${schema}`);
  cleanUps.push(() => query(databaseUrl, `DROP SCHEMA ${schema} CASCADE`));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The server's version, and its connections left to clients: max_connections less the superusers' reserve. */
export async function postgresFacts(databaseUrl: string) {
  const [row] = await query<{ version: string; max: string; reserved: string }>(
    databaseUrl,
    `SELECT current_setting('server_version') AS version, current_setting('max_connections') AS max,
       current_setting('superuser_reserved_connections') AS reserved`,
  );
  if (row === undefined) throw new Error('PostgreSQL answered no settings');
  return { version: row.version, availableConnections: Number(row.max) - Number(row.reserved) };
}

/** A Redis key prefix of the run's own, whose keys are deleted at clean-up. */
export function freshRedisPrefix(redisUrl: string, cleanUps: CleanUp[]): string {
  const prefix = `${uniqueName('petstore_capacity')}:`;
  cleanUps.push(() => deleteKeys(redisUrl, prefix));
  return prefix;
}

/** A connection that fails at once, instead of retrying, when Redis cannot be reached. */
export async function connectRedis(redisUrl: string): Promise<Redis> {
  const redis = new Redis(redisUrl, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
  // Failures reach the caller through the rejected connect or command, not as an 'error' event.
  let cause: unknown;
  redis.on('error', (error) => (cause = error));
  try {
    await redis.connect();
  } catch (error) {
    const reason = cause instanceof Error ? cause.message : String(error);
    throw new Error(`Redis at ${redisUrl} is unreachable: ${reason}`, { cause: cause ?? error });
  }
  return redis;
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = await connectRedis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
