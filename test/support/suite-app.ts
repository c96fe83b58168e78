import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.ts';

/**
 * Something the tests of a suite share, made by a `before` hook and undone by an `after` hook that
 * this registers in the suite it is called from. The suite's body runs before the hook, its tests
 * after it: they read the thing through the function returned.
 */
export function forSuite<T>(setUp: () => Promise<T>, tearDown: (value: T) => Promise<void> | void): () => T {
  let made: { readonly value: T } | undefined;
  before(async () => {
    made = { value: await setUp() };
  });
  after(async () => {
    if (made) await tearDown(made.value);
  });
  return () => {
    assert.ok(made, 'what the suite shares is read once its before hook has made it');
    return made.value;
  };
}

/**
 * The one app the tests of a suite share, started by a `before` hook and closed by an `after` hook:
 *
 *   describeEachBackend('GET /v1/pets', (backend) => {
 *     const app = appForSuite({ backend });
 *     it('…', async () => { … request(app, '/v1/pets', …) … });
 *   });
 *
 * What this returns stands for the app, looking the started one up at each use.
 */
export function appForSuite(options: TestAppOptions = {}): TestApp {
  const current = forSuite(
    () => startTestApp(options),
    (app) => app.close(),
  );
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
