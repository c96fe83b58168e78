// First, before anything can schedule a tick. Optional: without it the server only runs slower.
import './platform/keep-tick-object-maps.ts';
// Optional too: without it log lines go out through pino's own destination, only more slowly.
import './platform/chunked-log-writes.ts';
import type { FastifyInstance } from 'fastify';
import { DEMO_ACCOUNT } from './auth/account-service.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { buildServices, type Services } from './composition-root.ts';
import { buildApp } from './http/app.ts';
import { buildOperatorApp } from './operator/app.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly url: string;
  /** Where Prometheus scrapes, apart from the public URL; undefined with METRICS_PORT=off. */
  readonly metricsUrl: string | undefined;
  /**
   * Base URL of the operator listener (metrics, admin API under /admin/v1, console under /console);
   * undefined with METRICS_PORT=off.
   */
  readonly operatorUrl: string | undefined;
  stop(): Promise<void>;
}

/** Migrates, creates the demo key on an empty store, listens, and shuts down gracefully on signals. */
export async function startServer(config: Config): Promise<RunningServer> {
  const services = await buildServices(config, { collectProcessMetrics: true });
  let demoKey: string | undefined;
  try {
    await services.store.migrate();
    if (config.demoBootstrap) demoKey = await announceDemoKey(services);
  } catch (error) {
    await services.close();
    throw error;
  }
  // The operator listener first: an instance whose port for it is taken exits before the balancer sees it answer.
  const operator = await listenForOperators(services).catch(async (error: unknown) => {
    await services.close();
    throw error;
  });
  const app = await buildApp(services);
  const url = await app
    .listen({
      port: config.port,
      host: config.host,
      // One line per address bound, with the port bound (PORT=0 picks one): where a newcomer goes first.
      listenTextResolver: (address) => `Server listening at ${address} (API at ${address}/v1, docs at ${address}/docs)`,
    })
    .catch(async (error: unknown) => {
      await operator?.close();
      await services.close();
      throw listenError(error, { portName: 'PORT', hostName: 'HOST', port: config.port, host: config.host });
    });
  if (demoKey !== undefined) suggestFirstCall(demoKey, exampleOrigin(config, boundPort(app)));
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Referenced on purpose: it keeps the process alive until the shutdown is done or has failed
      // loudly. Were it not, a close still waiting on something idle (a socket nobody reads) would
      // let the process end at once, and the flushes below would never run.
      const deadline = setTimeout(() => {
        app.log.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      try {
        await Promise.all([app.close(), operator?.close()]);
        await services.close();
      } finally {
        clearTimeout(deadline);
      }
    })();
    return stopping;
  };
  const operatorUrl = operator?.url;
  const metricsUrl = operatorUrl === undefined ? undefined : `${operatorUrl}/metrics`;
  return { app, services, url, metricsUrl, operatorUrl, stop };
}

/** The operator app, listening, and how to stop it. */
interface OperatorListener {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The operator listener (metrics, admin API, console) next to the public one, on
 * METRICS_HOST:METRICS_PORT; its bound address is logged.
 */
async function listenForOperators(services: Services): Promise<OperatorListener | undefined> {
  const { metrics } = services.config;
  if (metrics === undefined) return undefined;
  const { app } = await buildOperatorApp({
    registry: services.metrics.registry,
    logger: services.logger,
    admin: services,
  });
  let url: string;
  try {
    url = await app.listen({
      port: metrics.port,
      host: metrics.host,
      // In place of Fastify's "Server listening at", which would read as the public listener's.
      listenTextResolver: (address) =>
        `Operator listener at ${address} (console at ${address}/console/login, admin API at ${address}/admin/v1; ` +
        'an operator token is needed)',
    });
  } catch (error) {
    await app.close();
    throw listenError(error, { portName: 'METRICS_PORT', hostName: 'METRICS_HOST', ...metrics });
  }
  services.logger.info({ url: `${url}/metrics` }, `Metrics listening at ${url}/metrics`);
  const close = async (): Promise<void> => {
    // A scraper's idle keep-alive connection must not hold the shutdown.
    app.server.closeIdleConnections();
    await app.close();
  };
  return { url, close };
}

/** Which settings chose a listener's address, and the address they chose. */
interface ListenSettings {
  readonly portName: string;
  readonly hostName: string;
  readonly port: number;
  readonly host: string;
}

/**
 * A listener that could not bind, as one line naming the settings that chose its address: Node's own
 * message (`listen EADDRINUSE: address already in use 127.0.0.1:8080`) names neither.
 */
function listenError(error: unknown, settings: ListenSettings): Error {
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(listenProblem(code, settings) ?? `${where(settings)}: ${reason}`, { cause: error });
}

function listenProblem(code: string | undefined, settings: ListenSettings): string | undefined {
  const host = `${settings.hostName} ${settings.host}`;
  switch (code) {
    case 'EADDRINUSE':
      return `${where(settings)} is already in use (EADDRINUSE)`;
    case 'EACCES':
      return `${where(settings)} is not allowed to this user (EACCES): ports below 1024 need privileges`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine (EADDRNOTAVAIL)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${host} does not resolve to an address (${code})`;
    default:
      return undefined;
  }
}

function where(settings: ListenSettings): string {
  return `${settings.portName} ${settings.port} on ${settings.hostName} ${settings.host}`;
}

/**
 * On an empty store, creates the demo account and prints its key, before listening, so that the key is
 * shown even if the server then cannot bind; the way to try it follows once the port is known.
 */
async function announceDemoKey(services: Services): Promise<string | undefined> {
  const demo = await services.accounts.bootstrapDemo();
  if (!demo) {
    await hintKeyCreation(services);
    return undefined;
  }
  process.stdout.write(
    [
      '',
      'Created the account "demo" (free plan) and its first API key. It is shown once, now:',
      '',
      `  ${demo.key}`,
      '',
    ].join('\n') + '\n',
  );
  return demo.key;
}

function suggestFirstCall(key: string, origin: string): void {
  process.stdout.write(`Try: curl -H "Authorization: Bearer ${key}" ${origin}/v1/pets\n\n`);
}

/** The store already had accounts, so no key is shown: a newcomer still learns how to get one. */
async function hintKeyCreation(services: Services): Promise<void> {
  const account = (await services.accounts.findAccount(DEMO_ACCOUNT)) ? DEMO_ACCOUNT : 'NAME';
  process.stdout.write(
    'No new API key printed (the store already has accounts); create one with: ' +
      `npm run -s petstore -- key create --account ${account}\n`,
  );
}

/** Where a newcomer on this machine reaches the server listening on `port`. */
function exampleOrigin(config: Config, port: number): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const host =
    config.host === '0.0.0.0' || config.host === '::'
      ? 'localhost'
      : config.host.includes(':')
        ? `[${config.host}]`
        : config.host;
  return `http://${host}:${port}`;
}

/** The port a listening app was given: PORT, or the one the system chose for PORT=0. */
function boundPort(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the public listener has no TCP port');
  return address.port;
}

export async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`petstore: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  let server: RunningServer;
  try {
    server = await startServer(config);
  } catch (error) {
    process.stderr.write(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const shutDown = (signal: NodeJS.Signals): void => {
    // A signal often comes twice: Ctrl-C reaches npm and the server, and npm forwards its copy; systemd
    // signals every process of the unit. The copy must not kill a shutdown that is already under way.
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'shutting down');
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, shutDown);
}

if (import.meta.main) await main();
