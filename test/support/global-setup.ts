import { clusterEnvironment, startRedisCluster, stopRedisCluster, type ClusterNodes } from './redis-cluster.ts';

/**
 * Servers that several test files share, started once per `npm test` run (node:test's
 * --test-global-setup) rather than once per file. Each file finds them through environment
 * variables, which the runner passes on to every test process; a file run alone starts its own.
 */
let cluster: ClusterNodes | undefined;

export async function globalSetup(): Promise<void> {
  try {
    cluster = await startRedisCluster();
    Object.assign(process.env, clusterEnvironment(cluster));
  } catch (error) {
    // Without CI the files that need a cluster try to start one themselves, and skip with the reason.
    if (process.env.CI === 'true') throw error;
  }
}

export async function globalTeardown(): Promise<void> {
  if (cluster) await stopRedisCluster(cluster);
}
