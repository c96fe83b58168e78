import { createHook } from 'node:async_hooks';

/**
 * Holds one of Node's internal tick objects for the life of the process, so that every later
 * process.nextTick keeps building its tick object through V8's fast path.
 *
 * A workaround for the platform, nothing more: src/server.ts imports it once, nothing else depends
 * on it, and deleting that import leaves the service working exactly the same, only slower.
 *
 * nextTick (Node 24.21.0) creates each tick object as an object literal with computed symbol keys.
 * V8 holds the hidden-class transitions such a literal creates only weakly: a full garbage
 * collection at a moment when no tick object is alive clears them, and the next tick object makes
 * new ones. After a few full collections the literal's inline caches have seen too many shapes, turn
 * megamorphic, and from then on every nextTick defines each of its keys through a runtime call. A
 * Fastify request runs several nextTicks, so in a server that has been up a while this cost about a
 * fifth of the instructions of GET /v1/pets/{id} (measured with callgrind). One tick object kept alive
 * keeps its shape alive, and the caches stay monomorphic.
 *
 * Measured on Node 24.21.0 against the same code without this file in `npm run bench` (compare mode,
 * 5 alternating rounds of 8 s, SQLite), as medians of the rounds' ratios: on 2026-11-25 post 1.26×
 * (faster in every round), list 0.99× and get 1.01×; an earlier run had list 1.15×, get 1.14× and
 * post 1.07×. Another Node version may build tick objects differently: measure again before relying
 * on the figure, and delete the import when it no longer pays.
 */
const keptTickObject = newTickObject();

/** A tick object made now by process.nextTick, caught as it is created. */
export function newTickObject(): object | undefined {
  let made: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') made ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
  return made;
}

/** The tick object held, for a test that it is there. */
export function heldTickObject(): object | undefined {
  return keptTickObject;
}
