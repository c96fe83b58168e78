/** Where the API reference page lives. */
export const DOCS_PREFIX = '/docs';

/** A route's path as documents and messages write it: `/v1/pets/{petId}` for Fastify's `/v1/pets/:petId`. */
export function documentedPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}
