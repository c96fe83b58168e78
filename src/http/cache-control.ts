/**
 * Caching policy of every response. Everything but the public documents is `no-store`: answers to a
 * key are the account's own (and carry its quota), errors and health change from one request to the
 * next, so no cache, shared or private, may keep them.
 */
export const NO_STORE = 'no-store';

/** The public documents (/v1/openapi.json, the /docs page and assets): the same for everyone, changed by a release. */
export const PUBLIC_DOCUMENT = 'public, max-age=300';
