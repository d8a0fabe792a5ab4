/**
 * IPv6 spellings of the IPv4 loopback address 127.0.0.1, and a resolver that answers host names
 * with them, for tests of the outbound policy (URL literals and resolved addresses alike).
 */
import type { LookupAddress } from 'node:dns';
import type { OutboundResolver } from '../../core/outbound/outbound-policy.ts';

export interface LoopbackForm {
  /** What the form is, in test names. */
  readonly form: string;
  /** The IPv6 address (without brackets). */
  readonly address: string;
  /** A host name {@link loopbackFormsResolver} resolves to the address. */
  readonly name: string;
}

/** The client address of Teredo is stored inverted: 127.0.0.1 is 80ff:fffe. */
const FORMS: readonly (readonly [string, string])[] = [
  ['IPv4-compatible ::a.b.c.d', '::127.0.0.1'],
  ['IPv4-mapped ::ffff:a.b.c.d', '::ffff:127.0.0.1'],
  ['IPv4-translated ::ffff:0:a.b.c.d', '::ffff:0:7f00:1'],
  ['6to4 2002::/16', '2002:7f00:1::'],
  ['well-known NAT64 64:ff9b::/96', '64:ff9b::7f00:1'],
  ['local-use NAT64 64:ff9b:1::/48', '64:ff9b:1::7f00:1'],
  ['Teredo 2001::/32', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
  ['ISATAP ::5efe:a.b.c.d', '2a01:4f8::5efe:7f00:1'],
];

export const LOOPBACK_FORMS: readonly LoopbackForm[] = FORMS.map(([form, address], i) => ({
  form,
  address,
  name: `loopback-form-${i}.example.test`,
}));

/**
 * Resolves the names of {@link LOOPBACK_FORMS} to their addresses, and the names of `more` to
 * what the map says at the time of the lookup (so a test can change it); any other name is not found.
 */
export function loopbackFormsResolver(more: ReadonlyMap<string, string> = new Map()): OutboundResolver {
  return async (hostname) => {
    const address = LOOPBACK_FORMS.find((f) => f.name === hostname)?.address ?? more.get(hostname);
    if (address === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    const answer: LookupAddress = { address, family: address.includes(':') ? 6 : 4 };
    return [answer];
  };
}

/** `http://[address]:port` for a form, as a user would write the literal. */
export const literalOrigin = (form: LoopbackForm, port: number | string): string => `http://[${form.address}]:${port}`;
