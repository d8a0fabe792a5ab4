/**
 * What the service may reach when it makes a request of its own (sync sources, webhook deliveries).
 *
 * By default only public addresses: loopback, private, link-local, shared (CGNAT), documentation,
 * multicast and reserved ranges are refused, so a URL a user supplies cannot turn the service into
 * a proxy onto the network it runs in (server-side request forgery). The operator opens them with
 * `KB_OUTBOUND_ALLOW_PRIVATE=true` (on-premise stores, tests against loopback servers).
 *
 * Addresses are checked after DNS resolution, at connect time ({@link createGuardedAgent}), so a
 * name that resolves to a public address when a target is configured and to a private one later
 * (DNS rebinding) is still refused.
 */

import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { KbError } from '../errors/kb-error.ts';

export interface OutboundPolicy {
  /** `KB_OUTBOUND_ALLOW_PRIVATE`: let requests reach loopback, private and link-local addresses. */
  readonly allowPrivate: boolean;
}

const NON_PUBLIC_V4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const NON_PUBLIC_V6: readonly (readonly [string, number])[] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still private)
  ['ff00::', 8], // multicast
];

const blocked = new net.BlockList();
for (const [address, prefix] of NON_PUBLIC_V4) blocked.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of NON_PUBLIC_V6) blocked.addSubnet(address, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`), if any. */
function embeddedV4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1] ?? '0', 16);
  const low = Number.parseInt(hex[2] ?? '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * True for an address the service must not reach by default: loopback, private, link-local,
 * shared, documentation, multicast, reserved or unspecified, and IPv6 forms carrying one of them.
 * Anything that is not an IP address at all counts as non-public.
 */
export function isNonPublicAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = net.isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(bare);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(bare, 'ipv6');
  }
  return true;
}

/** Marks the socket error raised when a connection is refused by the policy. */
export const OUTBOUND_REFUSED = 'EOUTBOUNDREFUSED';

function refusedError(host: string, address: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(
    `${host} resolves to ${address}, a loopback, private or link-local address; set KB_OUTBOUND_ALLOW_PRIVATE=true to allow it`,
  );
  error.code = OUTBOUND_REFUSED;
  return error;
}

/** Throws `outbound-refused` unless the URL is http(s) without credentials in it. */
export function checkOutboundUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new KbError('outbound-refused', `"${String(url)}" is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new KbError('outbound-refused', `Only http and https URLs can be reached, not ${parsed.protocol}`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new KbError('outbound-refused', 'URLs with credentials in them are not accepted');
  }
  return parsed;
}

/**
 * Checks a target when it is configured (a source's URL or endpoint, a webhook's URL): throws
 * `outbound-refused` (422) when the scheme is not http(s), the URL carries credentials, or any
 * address its host resolves to is non-public and the policy does not allow it. A host that does
 * not resolve is refused too, with the reason.
 */
export async function checkOutboundTarget(url: string | URL, policy: OutboundPolicy): Promise<void> {
  const parsed = checkOutboundUrl(url);
  if (policy.allowPrivate) return;
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  let addresses: string[];
  if (net.isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (error) {
      throw new KbError('outbound-refused', `${host} does not resolve (${(error as Error).message})`, {
        cause: error,
      });
    }
  }
  const refused = addresses.find(isNonPublicAddress);
  if (refused !== undefined) {
    throw new KbError('outbound-refused', refusedError(host, refused).message);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for sockets that fails for non-public addresses unless the policy allows them. */
export function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as dns.LookupAddress[];
      if (!policy.allowPrivate) {
        const refused = list.find((a) => isNonPublicAddress(a.address));
        if (refused) return callback(refusedError(hostname, refused.address), []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** A socket that fails at once with `error` (what an agent hands back for a refused IP literal). */
function failedSocket(error: Error): net.Socket {
  const socket = new net.Socket();
  process.nextTick(() => socket.destroy(error));
  return socket;
}

/**
 * An http(s) agent whose connections go only where the policy allows: host names are resolved
 * through {@link guardedLookup}, and IP literals (which skip DNS) are checked directly. For clients
 * that take an agent, such as the `minio` client's `transportAgent`.
 */
export function createGuardedAgent(protocol: 'http:' | 'https:', policy: OutboundPolicy): http.Agent {
  const lookup = guardedLookup(policy);
  const check = (options: { host?: string | null }): Error | undefined => {
    const host = options.host ?? '';
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    if (!policy.allowPrivate && net.isIP(bare) !== 0 && isNonPublicAddress(bare)) return refusedError(bare, bare);
    return undefined;
  };
  if (protocol === 'https:') {
    return new (class extends https.Agent {
      override createConnection(options: never, callback?: never): net.Socket {
        const error = check(options);
        if (error) return failedSocket(error);
        return super.createConnection({ ...(options as object), lookup } as never, callback) as net.Socket;
      }
    })({ keepAlive: true });
  }
  return new (class extends http.Agent {
    override createConnection(options: never, callback?: never): net.Socket {
      const error = check(options);
      if (error) return failedSocket(error);
      return super.createConnection({ ...(options as object), lookup } as never, callback) as net.Socket;
    }
  })({ keepAlive: true });
}
