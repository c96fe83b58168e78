import assert from 'node:assert/strict';
import { OperatorTokenService } from '../../src/auth/operator-tokens.ts';
import { startOperatorListener, type OperatorListener } from '../support/operator-listener.ts';
import { request, type HttpTarget } from '../support/http-client.ts';
import { forSuite, standIn } from '../support/suite-app.ts';
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
  /**
   * Logs in to the console with `token` (the app's own by default) as the login page does, from the
   * listener's own origin; the `Cookie` header value that carries the new session.
   */
  logIn(token?: string): Promise<string>;
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
  const tokens = new OperatorTokenService(services.store, services.clock);
  const { token } = await tokens.create('tests');
  // The document as the listener serves it, fetched once with the token: every later answer of a
  // documented operation is checked against it.
  const response = await fetch(`${listener.url}/admin/v1/openapi.json`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200, 'GET /admin/v1/openapi.json with a token answers 200');
  const document: unknown = await response.json();
  const operator: HttpTarget = { url: listener.url, app: { swagger: () => document } };
  return {
    publicApp,
    listener,
    operator,
    token,
    tokens,
    async logIn(given = token) {
      const login = await request(operator, '/admin/v1/session', {
        method: 'POST',
        json: { token: given },
        headers: { origin: listener.url },
      });
      assert.equal(login.status, 204, login.text);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      assert.match(cookie, /^petstore_operator=[A-Za-z0-9_-]{43}$/);
      return cookie;
    },
    async close() {
      await listener.close();
      await publicApp.close();
    },
  };
}

/**
 * The app of a suite: started before its tests, closed after them. Called in the suite's body, it
 * stands for the app its tests then use (reading it before the suite starts fails, naming why):
 *
 *   describeEachBackend('…', (backend) => {
 *     const app = operatorAppForSuite({ backend });
 *     it('…', async () => { … app.operator … });
 *   });
 */
export function operatorAppForSuite(options: OperatorTestAppOptions = {}): OperatorTestApp {
  return standIn(
    forSuite(
      () => startOperatorTestApp(options),
      (app) => app.close(),
    ),
  );
}
