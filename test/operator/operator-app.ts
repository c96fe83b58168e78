import assert from 'node:assert/strict';
import { OperatorTokenService } from '../../src/auth/operator-tokens.ts';
import { startOperatorListener, type OperatorListener } from '../support/operator-listener.ts';
import type { HttpTarget } from '../support/http-client.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/test-app.ts';

/**
 * The public app and its operator listener, both on ephemeral ports of 127.0.0.1, over the same
 * services, as src/server.ts runs them; and an operator token to call the admin API with.
 */
export interface OperatorTestApp {
  /** The public listener (its own HttpTarget: the public API, checked against its document). */
  readonly publicApp: TestApp;
  readonly listener: OperatorListener;
  /**
   * The operator listener as a request target: answers to operations of the admin document it
   * serves at /admin/v1/openapi.json are checked against that document (test/support/openapi-contract.ts).
   */
  readonly operator: HttpTarget;
  /** A valid operator token. */
  readonly token: string;
  readonly tokens: OperatorTokenService;
  close(): Promise<void>;
}

export interface OperatorTestAppOptions extends TestAppOptions {
  readonly authFailuresPerMinute?: number;
}

export async function startOperatorTestApp(options: OperatorTestAppOptions = {}): Promise<OperatorTestApp> {
  const publicApp = await startTestApp(options);
  const { services } = publicApp;
  const listener = await startOperatorListener({
    registry: services.metrics.registry,
    logger: services.logger,
    admin: { ...services, authFailuresPerMinute: options.authFailuresPerMinute },
    port: 0,
    host: '127.0.0.1',
  });
  const tokens = new OperatorTokenService(services.store.operatorTokens, services.clock);
  const { token } = await tokens.create('tests');
  // The document as the listener serves it, fetched once with the token: every later answer of a
  // documented operation is checked against it.
  const response = await fetch(`${listener.url}/admin/v1/openapi.json`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200, 'GET /admin/v1/openapi.json with a token answers 200');
  const document: unknown = await response.json();
  return {
    publicApp,
    listener,
    operator: { url: listener.url, app: { swagger: () => document } },
    token,
    tokens,
    async close() {
      await listener.close();
      await publicApp.close();
    },
  };
}
