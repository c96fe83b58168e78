import type { onSendHookHandler, RouteOptions } from 'fastify';

/** Adds an onSend hook to one route after its own: from an onRoute hook, where a fact of the route asks for it. */
export function appendOnSend(route: RouteOptions, hook: onSendHookHandler): void {
  const hooks = route.onSend;
  if (hooks === undefined) route.onSend = hook;
  else route.onSend = Array.isArray(hooks) ? [...hooks, hook] : [hooks, hook];
}
