import { isIPv6 } from 'node:net';
import { normalizeAddress } from './client-address.ts';

/**
 * Host names as a listener compares them: lower case, an IP address in canonical form (IPv6 in
 * brackets, as it appears in a Host header), no port.
 */

/** The names every listener on this machine is reached by locally. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Addresses that bind every interface: no browser sends them as a Host. */
const WILDCARDS = new Set(['0.0.0.0', '[::]']);

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DNS_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** A setting's host name (an IP address or a DNS name) in the form compared; undefined when it is neither. */
export function canonicalHostName(text: string): string | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const address = normalizeAddress(bare);
  if (address !== undefined) return isIPv6(address) ? `[${address}]` : address;
  if (bare !== text) return undefined;
  const name = text.toLowerCase();
  return name.length <= 253 && DNS_NAME.test(name) ? name : undefined;
}

/** The host name of a Host header's value (`name`, `name:port`, `[v6]:port`); undefined when it is not one. */
export function hostNameOfHeader(value: string): string | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::\d{0,5})?$/.exec(value.trim());
  return match === null ? undefined : canonicalHostName(match[1] as string);
}

/**
 * The names a listener bound to `bindHost` answers to: the loopback names, `bindHost` itself unless
 * it is a wildcard (0.0.0.0, ::), which no browser sends, and `extra` (already canonical).
 */
export function servedHostNames(bindHost: string | undefined, extra: readonly string[]): ReadonlySet<string> {
  const names = new Set([...LOOPBACK_HOST_NAMES, ...extra]);
  const bound = bindHost === undefined ? undefined : canonicalHostName(bindHost);
  if (bound !== undefined && !WILDCARDS.has(bound)) names.add(bound);
  return names;
}

/**
 * Parses a comma-separated list of host names (OPERATOR_HOSTS); empty text is an empty list. Throws
 * with the entry at fault: a port, a scheme, a path or a wildcard is no host name.
 */
export function parseHostNames(text: string): readonly string[] {
  if (text.trim() === '') return [];
  return text.split(',').map((entry) => {
    const name = canonicalHostName(entry.trim());
    if (name === undefined || WILDCARDS.has(name)) throw new HostNameError(entry.trim());
    return name;
  });
}

/** A list entry that is no host name. The message completes "OPERATOR_HOSTS …" and names no value: `entry` is it. */
export class HostNameError extends Error {
  readonly entry: string;
  constructor(entry: string) {
    super(
      entry === ''
        ? 'has an empty entry, a comma too many'
        : 'has an entry that is not a host name (a DNS name or an IP address, without port or scheme)',
    );
    this.entry = entry;
  }
}
