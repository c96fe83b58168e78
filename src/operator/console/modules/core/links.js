// @ts-check
/* global URLSearchParams */
// Links between the console's pages.

import { el } from './dom.js';

/** @param {string} name */
export function accountHref(name) {
  return `/console/accounts/${encodeURIComponent(name)}`;
}

/** @param {string} name */
export function accountLink(name) {
  return el('a', { href: accountHref(name) }, name);
}

/** @param {Readonly<Record<string, string>>} parameters */
export function auditHref(parameters) {
  const query = new URLSearchParams(parameters).toString();
  return query === '' ? '/console/audit' : `/console/audit?${query}`;
}
