import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.ts';

/**
 * The one app the tests of a suite share, started by a `before` hook and closed by an `after` hook
 * that this registers in the suite it is called from:
 *
 *   describeEachBackend('GET /v1/pets', (backend) => {
 *     const app = appForSuite({ backend });
 *     it('…', async () => { … request(app, '/v1/pets', …) … });
 *   });
 *
 * The tests run after the hook, but the suite's body runs before it: what this returns stands for
 * the app and looks the started one up at each use.
 */
export function appForSuite(options: TestAppOptions = {}): TestApp {
  let started: TestApp | undefined;
  before(async () => {
    started = await startTestApp(options);
  });
  after(() => started?.close());
  const current = (): TestApp => {
    assert.ok(started, 'the suite app is used once its before hook has started it');
    return started;
  };
  return {
    get app() {
      return current().app;
    },
    get services() {
      return current().services;
    },
    get url() {
      return current().url;
    },
    get clock() {
      return current().clock;
    },
    newKey: (keyOptions) => current().newKey(keyOptions),
    execute: (sql) => current().execute(sql),
    close: () => current().close(),
  };
}
