import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { normalizeAddress } from './client-address.ts';
import { rawHeaderCount } from './raw-headers.ts';

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

/** A host and its port, if any, as a Host header or a request target's authority writes them. */
export interface Authority {
  /** As sent: a name, an IPv4 address, or an IPv6 address in brackets. */
  readonly host: string;
  /** One to five digits, at most 65535; undefined when none is given. */
  readonly port: string | undefined;
}

/** RFC 3986's reg-name (which covers IPv4 addresses) or an IP literal, then an optional port. */
const REG_NAME = "(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+";
const AUTHORITY = new RegExp(`^(\\[[0-9A-Fa-f:.]+\\]|${REG_NAME})(?::([0-9]{1,5}))?$`);
const PORT_MAX = 65535;

/**
 * `host[:port]` as RFC 9110 (section 7.2) writes a Host header and the authority of an http URI,
 * without user information; undefined for anything else: an empty host, an empty port (`host:`),
 * a port of more than five digits or above 65535, an IP literal that is no IPv6 address.
 */
export function parseAuthority(text: string): Authority | undefined {
  const match = AUTHORITY.exec(text);
  if (match === null) return undefined;
  const host = match[1] as string;
  const port = match[2];
  if (host.startsWith('[') && !isIPv6(host.slice(1, -1))) return undefined;
  if (port !== undefined && Number(port) > PORT_MAX) return undefined;
  return { host, port };
}

/** The host name of a Host header's value (`name`, `name:port`, `[v6]:port`); undefined when it is not one. */
export function hostNameOfHeader(value: string): string | undefined {
  const authority = parseAuthority(value.trim());
  return authority === undefined ? undefined : canonicalHostName(authority.host);
}

/** The same host and port: names in any case, addresses in any spelling (`[::1]`, `[0:0::1]`). */
function sameAuthority(a: Authority, b: Authority): boolean {
  const name = (authority: Authority) => canonicalHostName(authority.host) ?? authority.host.toLowerCase();
  return a.port === b.port && name(a) === name(b);
}

/** The scheme and authority of an absolute-form target (`http://host:port/path`), as a proxy sends it. */
const ABSOLUTE_FORM = /^(https?):\/\/([^/?#]*)/i;

/** Why a request's host cannot be known; the HTTP edge answers each with `400 invalid_host`. */
export type HostProblem =
  | { readonly kind: 'repeated'; readonly count: number }
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed'; readonly host: string }
  | { readonly kind: 'malformed-target'; readonly authority: string }
  | { readonly kind: 'other-target'; readonly authority: string; readonly host: string };

/**
 * What is wrong with the host a request names, under RFC 9112 (section 3.2): exactly one Host
 * header in HTTP/1.1 (HTTP/1.0 may send none), whose value is `host[:port]`; and a target in
 * absolute form, whose authority is the request's host (section 3.2.2), names that same host
 * without user information. Undefined when nothing is.
 */
export function hostProblemOf(request: IncomingMessage): HostProblem | undefined {
  const count = rawHeaderCount(request.rawHeaders, 'host');
  if (count > 1) return { kind: 'repeated', count };
  const host = request.headers.host;
  if (host === undefined) return request.httpVersion === '1.0' ? undefined : { kind: 'missing' };
  const authority = parseAuthority(host);
  if (authority === undefined) return { kind: 'malformed', host };
  const url = request.url ?? '/';
  // Origin form, nearly every request: nothing more to check.
  if (url.charCodeAt(0) === SLASH) return undefined;
  const target = ABSOLUTE_FORM.exec(url)?.[2];
  if (target === undefined) return undefined;
  const named = parseAuthority(target);
  if (named === undefined) return { kind: 'malformed-target', authority: target };
  return sameAuthority(named, authority) ? undefined : { kind: 'other-target', authority: target, host };
}

/**
 * The host a request names: its target's authority in absolute form, else its Host header;
 * undefined when it names none (HTTP/1.0). Assumes hostProblemOf found nothing wrong.
 */
export function requestHost(request: IncomingMessage): string | undefined {
  const url = request.url ?? '/';
  const target = url.charCodeAt(0) === SLASH ? undefined : ABSOLUTE_FORM.exec(url)?.[2];
  return target ?? request.headers.host;
}

const SLASH = 0x2f;

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
