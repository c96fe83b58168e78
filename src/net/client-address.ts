import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Which hops in front of the service may speak for the client in `X-Forwarded-For` (TRUST_PROXY):
 * none, a number of hops, or the proxies' addresses and CIDR ranges.
 */
export type TrustedProxies =
  | { readonly kind: 'none' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'list'; readonly entries: readonly string[] };

/**
 * A TRUST_PROXY value that cannot be used. The message completes "TRUST_PROXY …" and names no
 * value: whoever reports it names the value once, or `entry`, the part of a list at fault.
 */
export class TrustedProxiesError extends Error {
  readonly entry: string | undefined;
  constructor(message: string, entry?: string) {
    super(message);
    this.entry = entry;
  }
}

const NO_PROXY: TrustedProxies = Object.freeze({ kind: 'none' });
const INSTEAD = 'name the proxies (e.g. 10.0.0.5,10.1.0.0/16) or give a number of hops of 2 or more';

/**
 * The widest ranges that may be trusted: an IPv4 /8 (as 10.0.0.0/8) and an IPv6 /16. A wider one
 * holds all (0.0.0.0/0, ::/0) or a large part of the Internet's addresses, so every client, or
 * nearly, could write its own address into X-Forwarded-For and be believed.
 */
const WIDEST_TRUSTED_PREFIX = Object.freeze({ ipv4: 8, ipv6: 16 });

/**
 * Parses TRUST_PROXY. `true` and `1` once meant "believe the leftmost X-Forwarded-For entry",
 * which the client writes itself; they are refused rather than silently given a new meaning, and
 * so is a range that would do the same by covering (nearly) every address.
 */
export function parseTrustedProxies(text: string | undefined): TrustedProxies {
  const value = (text ?? '').trim();
  if (value === '' || value === 'false' || value === '0') return NO_PROXY;
  if (value === 'true' || value === '1')
    throw new TrustedProxiesError(`no longer takes true or 1, which trusted what clients write: ${INSTEAD}`);
  if (/^[1-9]\d*$/.test(value)) {
    const hops = Number(value);
    if (hops > 64) throw new TrustedProxiesError('counts at most 64 hops');
    return Object.freeze({ kind: 'hops', hops });
  }
  const entries = value.split(',').map((entry) => entry.trim());
  return Object.freeze({ kind: 'list', entries: Object.freeze(entries.map(parseEntry)) });
}

/** One address or CIDR range, in canonical form. */
function parseEntry(entry: string): string {
  if (entry === '') throw new TrustedProxiesError('has an empty entry, a comma too many');
  const [address = '', prefix, extra] = entry.split('/');
  const normal = normalizeAddress(address);
  if (normal === undefined || extra !== undefined)
    throw new TrustedProxiesError('has an entry that is not an IP address or CIDR range', entry);
  if (prefix === undefined) return normal;
  if (isIPv4(normal) !== isIPv4(address))
    throw new TrustedProxiesError('has an IPv4-mapped range; write it in IPv4 form', entry);
  const bits = isIPv4(normal) ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits)
    throw new TrustedProxiesError(`has a CIDR prefix outside 0-${bits}`, entry);
  const widest = isIPv4(normal) ? WIDEST_TRUSTED_PREFIX.ipv4 : WIDEST_TRUSTED_PREFIX.ipv6;
  if (Number(prefix) < widest) {
    throw new TrustedProxiesError(
      `has a range wider than /${widest}, which trusts what (nearly) every client writes: ${INSTEAD}`,
      entry,
    );
  }
  return `${normal}/${prefix}`;
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The canonical form of an IP address: IPv4 dotted decimal (IPv4-mapped IPv6 included), IPv6 as
 * RFC 5952 text (lower case, longest zero run compressed). Undefined for anything else.
 */
export function normalizeAddress(text: string): string | undefined {
  if (isIPv4(text)) return text;
  if (!isIPv6(text) || text.includes('%')) return undefined;
  // The WHATWG URL parser writes IPv6 hosts in RFC 5952 form.
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = MAPPED_IPV4.exec(canonical);
  if (!mapped) return canonical;
  const high = Number.parseInt(mapped[1] as string, 16);
  const low = Number.parseInt(mapped[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * The prefix lengths IPV6_LIMIT_PREFIX may take. A /32 is an ISP's usual allocation: a shorter one
 * would put the customers of several providers in one window, so that one client could use up
 * everybody's. 128 keys every address apart, as an IPv4 address is.
 */
export const IPV6_LIMIT_PREFIX_RANGE = Object.freeze({ min: 32, max: 128 });

/**
 * What the per-address limits count a client address under: an IPv4 address (IPv4-mapped IPv6
 * included) by itself; an IPv6 address by its network of `ipv6Prefix` bits, written as that network
 * in RFC 5952 form (`2001:db8:1:2::/64`), or as the address itself at 128. Every IPv6 host is given
 * a /64 and may send from any address in it, so keying on the address would give it 2^64 windows.
 * Text that is no IP address (`unknown`, a peer with a zone) is kept as it is.
 */
export function limitedNetworkOf(address: string, ipv6Prefix: number): string {
  const normal = normalizeAddress(address);
  if (normal === undefined) return address;
  if (isIPv4(normal) || ipv6Prefix >= 128) return normal;
  const groups = ipv6Groups(normal);
  const masked = groups.map((group, index) => {
    const bits = Math.min(16, Math.max(0, ipv6Prefix - index * 16));
    return group & (0xffff << (16 - bits)) & 0xffff;
  });
  // The WHATWG URL parser writes it in RFC 5952 form, longest zero run compressed.
  const network = new URL(`http://[${masked.map((group) => group.toString(16)).join(':')}]/`).hostname.slice(1, -1);
  return `${network}/${ipv6Prefix}`;
}

/** The eight 16-bit groups of an IPv6 address as normalizeAddress writes it (hex groups, one `::` at most). */
function ipv6Groups(canonical: string): number[] {
  const [head = '', tail] = canonical.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The client address of a request, from its TCP peer and its X-Forwarded-For header. */
export type ClientAddressOf = (peer: string | undefined, forwardedFor: string | string[] | undefined) => string;

/**
 * The client is the rightmost address, counting the TCP peer as the rightmost of all, that is not
 * a trusted proxy (or lies beyond the trusted number of hops). An entry on the way that is not an
 * IP address makes the peer the client: whoever wrote it cannot be believed about anything else.
 */
export function clientAddressResolver(trusted: TrustedProxies): ClientAddressOf {
  const isTrusted = trustTest(trusted);
  return (peer, forwardedFor) => {
    const peerAddress = peer === undefined ? 'unknown' : (normalizeAddress(peer) ?? peer);
    if (trusted.kind === 'none' || !isTrusted(peerAddress, 0)) return peerAddress;
    const hops = forwardedEntries(forwardedFor);
    let client = peerAddress;
    for (let index = 0; index < hops.length; index += 1) {
      const address = normalizeAddress(hops[index] as string);
      if (address === undefined) return peerAddress;
      client = address;
      if (!isTrusted(address, index + 1)) return address;
    }
    return client;
  };
}

/** X-Forwarded-For entries, nearest hop first (Node joins repeated headers with ", "). */
function forwardedEntries(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const joined = Array.isArray(header) ? header.join(',') : header;
  return joined
    .split(',')
    .map((entry) => entry.trim())
    .reverse();
}

/** Whether the address at `position` (0: the TCP peer, 1: the nearest forwarded entry…) is a trusted proxy. */
function trustTest(trusted: TrustedProxies): (address: string, position: number) => boolean {
  if (trusted.kind === 'none') return () => false;
  if (trusted.kind === 'hops') return (_address, position) => position < trusted.hops;
  const list = new BlockList();
  for (const entry of trusted.entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return (address) => list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}
