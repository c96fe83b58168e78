import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { redisReachable, redisServerUnavailable, testKeyspace } from './redis-backend.ts';
import { freePort } from './server-process.ts';

const run = promisify(execFile);

/**
 * A Redis Cluster of three masters, each with one replica, from Debian's redis-server: started once
 * per test run by the global setup (test/support/global-setup.ts), which hands it to every test
 * file in PETSTORE_TEST_REDIS_CLUSTER, or by a file of its own when run alone.
 *
 *   const cluster = await redisClusterBackend();
 *   describe('…', { skip: cluster.skip }, () => { … cluster.url, cluster.keyPrefix() … });
 *   after(() => cluster.cleanup());
 *
 * Nodes run detached and keep nothing on disk but their nodes.conf, so a node killed by a test
 * restarts into the cluster as the replica of whoever took over its slots.
 */
export interface ClusterNodes {
  /** Where each node keeps its nodes.conf. */
  readonly dir: string;
  readonly nodes: readonly { readonly port: number; readonly busPort: number }[];
}

export interface RedisClusterBackend {
  /** REDIS_URL for REDIS_CLUSTER=true: every node's URL, comma-separated ('' when skipped). */
  readonly url: string;
  readonly skip?: string;
  /** A fresh key prefix whose keys cleanup() deletes. */
  keyPrefix(): string;
  /** A cluster client for inspecting keys; closed by cleanup(). */
  client(): Cluster;
  /** The port of the master that serves `key` now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILL of one node's process, as if its host died. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again; resolves once the cluster is whole (every master with a replica). */
  restart(port: number): Promise<void>;
  /** Deletes the keys under the prefixes handed out; stops the cluster if this file started it. */
  cleanup(): Promise<void>;
}

const ENV = 'PETSTORE_TEST_REDIS_CLUSTER';
/** Short, so that a failover takes a couple of seconds rather than Redis's default 15. */
const NODE_TIMEOUT_MS = 1000;

function spawnNode(dir: string, port: number, busPort: number): ChildProcess {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--cluster-port',
      String(busPort),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      String(NODE_TIMEOUT_MS),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'ignore', detached: true },
  );
  child.on('error', () => undefined);
  child.unref();
  return child;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`Redis Cluster: timed out waiting for ${what}`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function onNode<T>(port: number, work: (node: Redis) => Promise<T>): Promise<T> {
  const node = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  node.on('error', () => undefined);
  try {
    await node.connect();
    return await work(node);
  } finally {
    node.disconnect();
  }
}

/** Every node reachable says the cluster is ok, and there are as many masters with a replica as expected. */
async function whole(nodes: ClusterNodes): Promise<boolean> {
  for (const { port } of nodes.nodes) {
    const info = await onNode(port, (node) => node.cluster('INFO'));
    if (!/^cluster_state:ok\s*$/m.test(String(info))) return false;
  }
  const table = String(await onNode(nodes.nodes[0]?.port ?? 0, (node) => node.cluster('NODES')));
  const lines = table.split('\n').filter((line) => line.trim() !== '' && !/\b(fail|fail\?|handshake)\b/.test(line));
  const masters = lines.filter((line) => line.split(' ')[2]?.includes('master')).length;
  const replicas = lines.filter((line) => line.split(' ')[2]?.includes('slave')).length;
  return masters === nodes.nodes.length / 2 && replicas === masters;
}

/** Starts six nodes and joins them into three masters with a replica each. */
export async function startRedisCluster(): Promise<ClusterNodes> {
  const missing = redisServerUnavailable();
  if (missing !== undefined) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-cluster-'));
  const nodes: { port: number; busPort: number }[] = [];
  for (let index = 0; index < 6; index += 1) nodes.push({ port: await freePort(), busPort: await freePort() });
  const cluster: ClusterNodes = { dir, nodes };
  const children = nodes.map((node) => spawnNode(dir, node.port, node.busPort));
  try {
    await Promise.all(
      nodes.map(({ port }) =>
        waitFor(`node ${port}`, () => redisReachable(`redis://127.0.0.1:${port}`, 200).then(() => true)),
      ),
    );
    const addresses = nodes.map(({ port }) => `127.0.0.1:${port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: 30_000,
    });
    await waitFor('the cluster to be whole', () => whole(cluster));
    return cluster;
  } catch (error) {
    // The nodes are detached, so nothing else would end them: a failed start leaves no server behind.
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export async function stopRedisCluster(cluster: ClusterNodes): Promise<void> {
  await Promise.all(
    cluster.nodes.map(({ port }) => onNode(port, (node) => node.call('SHUTDOWN', 'NOSAVE')).catch(() => undefined)),
  );
  rmSync(cluster.dir, { recursive: true, force: true });
}

/** The cluster of the global setup, or one of this file's own (stopped by cleanup). */
export async function redisClusterBackend(): Promise<RedisClusterBackend> {
  let nodes: ClusterNodes;
  let own = false;
  const shared = process.env[ENV];
  try {
    if (shared) nodes = JSON.parse(shared) as ClusterNodes;
    else {
      nodes = await startRedisCluster();
      own = true;
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (process.env.CI === 'true')
      throw new Error(`a Redis Cluster cannot be started (${reason}); CI=true, so its suites fail`, { cause: error });
    return skipped(`a Redis Cluster cannot be started here (${reason})`);
  }
  const url = nodes.nodes.map(({ port }) => `redis://127.0.0.1:${port}`).join(',');
  const keyspace = testKeyspace(() => new Cluster(url.split(','), { redisOptions: { maxRetriesPerRequest: 1 } }));
  return {
    url,
    keyPrefix: keyspace.keyPrefix,
    client: keyspace.client,
    async masterOf(key) {
      const slot = Number(await onNode(nodes.nodes[0]?.port ?? 0, (node) => node.cluster('KEYSLOT', key)));
      const port = await onNode(nodes.nodes[0]?.port ?? 0, async (node) => {
        const ranges = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
        return ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
      });
      if (port === undefined) throw new Error(`no master serves slot ${slot}`);
      return port;
    },
    async kill(port) {
      const info = await onNode(port, (node) => node.info('server'));
      const pid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
      process.kill(pid, 'SIGKILL');
      await waitFor(`node ${port} to die`, () =>
        redisReachable(`redis://127.0.0.1:${port}`, 200).then(
          () => false,
          () => true,
        ),
      );
    },
    async restart(port) {
      const node = nodes.nodes.find((candidate) => candidate.port === port);
      if (!node) throw new Error(`no node on port ${port}`);
      spawnNode(nodes.dir, node.port, node.busPort);
      await waitFor('the cluster to be whole again', () => whole(nodes), 30_000);
    },
    async cleanup() {
      const deleting = keyspace.takePrefixes();
      await Promise.all(keyspace.takeClients().map((connection) => connection.quit().catch(() => undefined)));
      if (deleting.length > 0) {
        const masters = await onNode(nodes.nodes[0]?.port ?? 0, async (node) => {
          const ranges = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
          return [...new Set(ranges.map((range) => range[2][1]))];
        }).catch(() => []);
        for (const port of masters)
          for (const prefix of deleting) await onNode(port, (node) => unlinkKeys(node, prefix)).catch(() => undefined);
      }
      if (own) await stopRedisCluster(nodes);
    },
  };
}

/** Deletes one node's keys under `prefix`, one by one: a node's keys lie in different slots. */
async function unlinkKeys(node: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) await node.unlink(key);
  } while (cursor !== '0');
}

function skipped(skip: string): RedisClusterBackend {
  const refuse = (): never => {
    throw new Error(skip);
  };
  return {
    url: '',
    skip,
    keyPrefix: () => 'petstore-test:skipped:',
    client: refuse,
    masterOf: refuse,
    kill: refuse,
    restart: refuse,
    cleanup: async () => undefined,
  };
}

/** For the global setup: what a test file needs to find the cluster. */
export function clusterEnvironment(cluster: ClusterNodes): Record<string, string> {
  return { [ENV]: JSON.stringify(cluster) };
}
