import { PGBOUNCER_URL_VARIABLE, startPgBouncer, type RunningPgBouncer } from './pgbouncer.ts';
import { clusterEnvironment, startRedisCluster, stopRedisCluster, type ClusterNodes } from './redis-cluster.ts';

/**
 * Servers that several test files share, started once per `npm test` run (node:test's
 * --test-global-setup) rather than once per file: a Redis Cluster and a PgBouncer. Each file finds
 * them through environment variables, which the runner passes on to every test process; a file run
 * alone starts its own.
 */
let cluster: ClusterNodes | undefined;
let bouncer: RunningPgBouncer | undefined;

export async function globalSetup(): Promise<void> {
  const [startedCluster, startedBouncer] = await Promise.allSettled([startRedisCluster(), startPgBouncer()]);
  if (startedCluster.status === 'fulfilled') {
    cluster = startedCluster.value;
    Object.assign(process.env, clusterEnvironment(cluster));
  }
  if (startedBouncer.status === 'fulfilled') {
    bouncer = startedBouncer.value;
    process.env[PGBOUNCER_URL_VARIABLE] = bouncer.url;
  }
  // Without CI the files that need them try to start their own, and skip with the reason.
  const failed = [startedCluster, startedBouncer].find((started) => started.status === 'rejected');
  if (failed && process.env.CI === 'true') {
    await globalTeardown();
    throw failed.reason;
  }
}

export async function globalTeardown(): Promise<void> {
  await Promise.all([cluster && stopRedisCluster(cluster), bouncer?.stop()]);
}
