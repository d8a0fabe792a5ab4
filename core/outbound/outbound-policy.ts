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
import { isNonPublicAddress, nonPublicReason } from './address-ranges.ts';

export { isNonPublicAddress, nonPublicReason };

/** Every address a host name resolves to (as `dns.lookup` with `all: true` gives them). */
export type OutboundResolver = (hostname: string) => Promise<dns.LookupAddress[]>;

export interface OutboundPolicy {
  /** `KB_OUTBOUND_ALLOW_PRIVATE`: let requests reach loopback, private and link-local addresses. */
  readonly allowPrivate: boolean;
  /**
   * How host names resolve, both when a target is checked and when a connection is made; the
   * system resolver (`dns.lookup`, which reads the hosts file too) unless given.
   */
  readonly resolve?: OutboundResolver;
}

const systemResolve: OutboundResolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** Marks the socket error raised when a connection is refused by the policy. */
export const OUTBOUND_REFUSED = 'EOUTBOUNDREFUSED';

function refusedError(host: string, address: string): NodeJS.ErrnoException {
  const why = nonPublicReason(address) ?? 'non-public';
  const what = host === address ? address : `${host} resolves to ${address}, which`;
  const error: NodeJS.ErrnoException = new Error(
    `${what} is not a public address (${why}); set KB_OUTBOUND_ALLOW_PRIVATE=true to allow loopback, private or link-local targets`,
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
      addresses = (await (policy.resolve ?? systemResolve)(host)).map((a) => a.address);
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
    const resolve = policy.resolve ?? ((name: string) => dns.promises.lookup(name, { ...options, all: true }));
    resolve(hostname).then(
      (all) => {
        const list =
          options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (!policy.allowPrivate) {
          const refused = list.find((a) => isNonPublicAddress(a.address));
          if (refused) return callback(refusedError(hostname, refused.address), []);
        }
        if (options.all) return callback(null, list);
        const first = list[0];
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
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
