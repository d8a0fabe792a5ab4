/**
 * Which IP addresses are public, for the outbound policy.
 *
 * IPv4: everything but the special-purpose ranges below. IPv6: only the global unicast range
 * `2000::/3`, less its special-purpose parts; every other prefix is reserved, unassigned, local
 * or deprecated. IPv6 forms that carry an IPv4 address are judged by that address, so a
 * loopback or private IPv4 address cannot be reached through its IPv6 spelling:
 *
 * - IPv4-mapped `::ffff:a.b.c.d` and IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765),
 * - the well-known NAT64 prefix `64:ff9b::/96` (RFC 6052),
 * - 6to4 `2002:AABB:CCDD::/48` (RFC 3056),
 * - Teredo `2001:0::/32` (RFC 4380): both the server address and the client address, which is
 *   stored inverted in the last 32 bits,
 * - an ISATAP interface identifier `…:0:5efe:a.b.c.d` (RFC 5214).
 *
 * The forms whose IPv4 address cannot be told for certain are refused outright: IPv4-compatible
 * `::a.b.c.d` (`::/96`, deprecated by RFC 4291) and the local-use NAT64 prefix `64:ff9b:1::/48`
 * (RFC 8215; its IPv4 address sits where the local prefix length puts it).
 */

import net from 'node:net';

type Range = readonly [address: string, prefix: number, what: string];

const V4_RANGES: readonly Range[] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignment'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** Special-purpose ranges of IPv6; the first that contains an address names it. */
const V6_RANGES: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible, ::/96, deprecated'],
  ['64:ff9b:1::', 48, 'local-use NAT64, 64:ff9b:1::/48'],
  ['100::', 64, 'discard'],
  ['2001:2::', 48, 'benchmarking'],
  ['2001:10::', 28, 'ORCHID (deprecated)'],
  ['2001:20::', 28, 'ORCHIDv2'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

function v4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function numberToV4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** The eight 16-bit groups of an IPv6 address (without zone), or undefined when it is not one. */
function v6Groups(ip: string): number[] | undefined {
  const bare = ip.split('%')[0] ?? '';
  if (net.isIPv6(bare) === false) return undefined;
  let text = bare.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const n = v4ToNumber(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const middle = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const groups = [...left, ...middle, ...right];
  return groups.length === 8 ? groups : undefined;
}

function v6ToBigInt(groups: readonly number[]): bigint {
  return groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

function inRange(value: bigint, bits: number, base: bigint, prefix: number): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

const V4_TABLE = V4_RANGES.map(([address, prefix, what]) => ({
  base: BigInt(v4ToNumber(address)),
  prefix,
  what,
}));
const V6_TABLE = V6_RANGES.map(([address, prefix, what]) => ({
  base: v6ToBigInt(v6Groups(address) ?? []),
  prefix,
  what,
}));
/** `2000::/3`, the only IPv6 range allocated for global unicast. */
const isGlobalUnicast = (groups: readonly number[]) => ((groups[0] ?? 0) & 0xe000) === 0x2000;

function v4Reason(ip: string): string | undefined {
  const value = BigInt(v4ToNumber(ip));
  return V4_TABLE.find((r) => inRange(value, 32, r.base, r.prefix))?.what;
}

/** The IPv4 addresses an IPv6 address carries, with the name of the form, per the module comment. */
function embeddedV4(groups: readonly number[]): { form: string; addresses: string[] } | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const low = numberToV4(((g6 << 16) | g7) >>> 0);
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroHead && g4 === 0 && g5 === 0xffff) return { form: 'IPv4-mapped', addresses: [low] };
  if (zeroHead && g4 === 0xffff && g5 === 0) return { form: 'IPv4-translated', addresses: [low] };
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return { form: 'NAT64', addresses: [low] };
  }
  if (g0 === 0x2002) return { form: '6to4', addresses: [numberToV4(((g1 << 16) | g2) >>> 0)] };
  if (g0 === 0x2001 && g1 === 0) {
    const server = numberToV4(((g2 << 16) | g3) >>> 0);
    const client = numberToV4(~((g6 << 16) | g7) >>> 0);
    return { form: 'Teredo', addresses: [client, server] };
  }
  if (isGlobalUnicast(groups) && (g4 & 0xfcff) === 0 && g5 === 0x5efe) return { form: 'ISATAP', addresses: [low] };
  return undefined;
}

/**
 * Why the service must not reach `ip` by default ("loopback", "6to4 form of 127.0.0.1, loopback" …),
 * or undefined when it is a public address. Anything that is not an IP address is refused too.
 * Brackets around an IPv6 literal are accepted.
 */
export function nonPublicReason(ip: string): string | undefined {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (net.isIPv4(bare)) return v4Reason(bare);
  const groups = v6Groups(bare);
  if (!groups) return 'not an IP address';
  const value = v6ToBigInt(groups);
  const named = V6_TABLE.find((r) => inRange(value, 128, r.base, r.prefix));
  if (named) return named.what;
  const carried = embeddedV4(groups);
  // Mapped, translated and NAT64 addresses lie outside 2000::/3: they are judged by their IPv4 address.
  if (!carried && !isGlobalUnicast(groups)) return 'outside global unicast (2000::/3)';
  if (!carried) return undefined;
  for (const address of carried.addresses) {
    const why = v4Reason(address);
    if (why !== undefined) return `${carried.form} form of ${address}, ${why}`;
  }
  return undefined;
}

/**
 * True for an address the service must not reach by default: loopback, private, link-local,
 * shared, documentation, multicast, reserved or unspecified, and IPv6 forms carrying one of them.
 * Anything that is not an IP address at all counts as non-public.
 */
export function isNonPublicAddress(ip: string): boolean {
  return nonPublicReason(ip) !== undefined;
}
