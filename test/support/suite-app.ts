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
  return standIn(
    forSuite(
      () => startTestApp(options),
      (app) => app.close(),
    ),
  );
}

/**
 * What stands, in a suite's body, for the value its before hook makes: each property is read from
 * that value when used, a function bound to it. It is no promise (`then` is absent), so it can be
 * passed around and returned before the hook has run.
 */
export function standIn<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_, property) {
      if (property === 'then') return undefined;
      const value = current();
      const field: unknown = Reflect.get(value, property);
      return typeof field === 'function' ? field.bind(value) : field;
    },
  });
}
