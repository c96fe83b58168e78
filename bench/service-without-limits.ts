import { buildServices } from '../src/composition-root.ts';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/http/build-app.ts';

/**
 * For `BENCH_LIMITS_COST=1` only: the service as src/server.ts runs it, on the same store and
 * settings, but without the limits step (rate limiting and its five headers). Keys are still
 * verified. What the limits step costs is the throughput difference between the two.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const services = await buildServices(config);
  await services.store.migrate();
  const app = await buildApp({ ...services, limits: undefined });
  await app.listen({ port: config.port, host: config.host });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void app
        .close()
        .then(() => services.close())
        .finally(() => process.exit(0));
    });
  }
}

if (import.meta.main) await main();
