import type { FastifyInstance } from 'fastify';
import { buildOperatorApp, type OperatorDependencies } from '../../src/operator/app.ts';

export interface OperatorListenerOptions extends OperatorDependencies {
  readonly port: number;
  readonly host: string;
}

/** The operator app bound to a port, as src/server.ts binds it, and what tests observe of it. */
export interface OperatorListener {
  readonly app: FastifyInstance;
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  /** `${url}/metrics`, where Prometheus scrapes. */
  readonly metricsUrl: string;
  renders(): number;
  close(): Promise<void>;
}

/** Builds the operator app and binds it (port 0: an ephemeral one). */
export async function startOperatorListener(options: OperatorListenerOptions): Promise<OperatorListener> {
  const { app, renders } = await buildOperatorApp(options);
  const url = await app.listen({ port: options.port, host: options.host });
  return {
    app,
    url,
    metricsUrl: `${url}/metrics`,
    renders,
    close: async () => {
      app.server.closeIdleConnections();
      await app.close();
    },
  };
}
