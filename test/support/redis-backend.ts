import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis, type Cluster } from 'ioredis';
import { freePort } from './server-process.ts';

/**
 * Redis for the suites that need it, following the convention of backends.ts (PostgreSQL):
 *
 *   const redis = await redisBackend();
 *   describe('…', { skip: redis.skip }, () => { … redis.url, redis.keyPrefix() … });
 *   after(() => redis.cleanup());
 *
 * The Redis of PETSTORE_TEST_REDIS_URL (default redis://127.0.0.1:6379) is shared: every test
 * takes its own key prefix and `cleanup()` deletes the keys under the prefixes it handed out.
 * When Redis is unreachable the suites are skipped with the reason, unless CI=true: then
 * `redisBackend()` rejects, which fails the test file instead of silently skipping.
 */
export interface RedisBackend {
  /** The Redis URL ('' when skipped). */
  readonly url: string;
  /** Why Redis cannot be used here; pass it as node:test's `skip` option. */
  readonly skip?: string;
  /** A fresh key prefix, e.g. `petstore-test:1a2b3c:`, whose keys cleanup() deletes. */
  keyPrefix(): string;
  /** A separate connection to this Redis, for inspecting keys; closed by cleanup(). */
  client(): Redis;
  /** Deletes every key under the prefixes handed out and closes the clients. Safe to call more than once. */
  cleanup(): Promise<void>;
}

export const REDIS_TEST_URL = process.env.PETSTORE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Resolves when Redis at `url` answers PING within `timeoutMs`; rejects with the reason otherwise. */
export async function redisReachable(url: string, timeoutMs = 2000): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw lastError ?? error;
  } finally {
    client.disconnect();
  }
}

export async function redisBackend(): Promise<RedisBackend> {
  const url = REDIS_TEST_URL;
  const shown = url.replace(/\/\/[^@/]*@/, '//…@');
  try {
    await redisReachable(url);
  } catch (error) {
    const reason = error instanceof Error ? error.message || error.name : String(error);
    if (process.env.CI === 'true') {
      throw new Error(
        `Redis at ${shown} is unreachable (${reason}); CI=true, so the Redis suites fail instead of being skipped`,
        { cause: error },
      );
    }
    const skip =
      `Redis at ${shown} is unreachable (${reason}); ` +
      'start it or set PETSTORE_TEST_REDIS_URL (with CI=true this fails instead)';
    return {
      url: '',
      skip,
      keyPrefix: () => 'petstore-test:skipped:',
      client: () => {
        throw new Error(skip);
      },
      cleanup: async () => undefined,
    };
  }
  const keyspace = testKeyspace(() => new Redis(url, { maxRetriesPerRequest: 1 }));
  return {
    url,
    keyPrefix: keyspace.keyPrefix,
    client: keyspace.client,
    async cleanup() {
      const deleting = keyspace.takePrefixes();
      if (deleting.length > 0) {
        const connection = keyspace.client();
        for (const prefix of deleting) await deleteKeys(connection, prefix);
      }
      for (const connection of keyspace.takeClients()) connection.disconnect();
    },
  };
}

/** The key prefixes and connections a Redis of the tests hands out, which its cleanup takes back. */
export interface TestKeyspace<Connection> {
  /** A prefix unique to this run and call, e.g. `petstore-test:1a2b3c4d-1:`. */
  keyPrefix(): string;
  /** A new connection that ignores connection errors (a test may be killing its server). */
  client(): Connection;
  /** The prefixes handed out so far; the next call returns only later ones. */
  takePrefixes(): string[];
  /** The connections opened so far; the next call returns only later ones. */
  takeClients(): Connection[];
}

export function testKeyspace<Connection extends Redis | Cluster>(connect: () => Connection): TestKeyspace<Connection> {
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  const prefixes: string[] = [];
  const clients: Connection[] = [];
  return {
    keyPrefix() {
      counter += 1;
      const prefix = `petstore-test:${run}-${counter}:`;
      prefixes.push(prefix);
      return prefix;
    },
    client() {
      const connection = connect();
      connection.on('error', () => undefined);
      clients.push(connection);
      return connection;
    },
    takePrefixes: () => prefixes.splice(0),
    takeClients: () => clients.splice(0),
  };
}

/** Deletes every key starting with `prefix`. */
export async function deleteKeys(connection: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await connection.scan(
      cursor,
      'MATCH',
      `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
      'COUNT',
      1000,
    );
    cursor = next;
    if (keys.length > 0) await connection.del(...keys);
  } while (cursor !== '0');
}

/**
 * A redis-server of the test's own, as a child process on a fixed ephemeral port, that keeps
 * nothing on disk: for killing, freezing and restarting Redis under a limiter.
 */
export interface OwnRedisServer {
  readonly port: number;
  readonly url: string;
  /** Starts (or restarts) the server on the same port; resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILL, no shutdown: as if the host died. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open but nothing is answered meanwhile. */
  freeze(): void;
  thaw(): void;
}

/** Why a redis-server cannot be started here, or undefined when it can. */
export function redisServerUnavailable(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    return `redis-server is not installed (${probe.error?.message ?? `exit ${String(probe.status)}`})`;
  return undefined;
}

export async function ownRedisServer(): Promise<OwnRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: OwnRedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child) throw new Error('redis-server is already running');
      const started = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      child = started;
      started.once('exit', () => {
        if (child === started) child = undefined;
      });
      const deadline = Date.now() + 5000;
      for (;;) {
        try {
          await redisReachable(server.url, 200);
          return;
        } catch (error) {
          if (Date.now() > deadline || !child)
            throw new Error(`redis-server on port ${port} did not start`, { cause: error });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
    async kill() {
      const running = child;
      if (!running) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
  };
  return server;
}
