/**
 * Which addresses the outbound policy counts as public: an IPv6 spelling of an IPv4 address is
 * judged by that IPv4 address, and the forms whose IPv4 address cannot be told are refused.
 */
import { describe, expect, it } from 'vitest';
import { isNonPublicAddress, nonPublicReason } from '../../../core/outbound/address-ranges.ts';
import { LOOPBACK_FORMS } from '../../support/loopback-forms.ts';

describe('IPv6 forms that carry an IPv4 address', () => {
  it.each(LOOPBACK_FORMS.map((f) => [f.form, f.address]))('%s of 127.0.0.1 (%s) is refused', (_form, address) => {
    expect(isNonPublicAddress(address)).toBe(true);
    expect(isNonPublicAddress(`[${address}]`)).toBe(true);
  });

  it('names the IPv4 address and why it is refused', () => {
    expect(nonPublicReason('2002:7f00:1::')).toBe('6to4 form of 127.0.0.1, loopback');
    expect(nonPublicReason('::ffff:0:a9fe:a9fe')).toBe('IPv4-translated form of 169.254.169.254, link-local');
    expect(nonPublicReason('64:ff9b::a00:1')).toBe('NAT64 form of 10.0.0.1, private');
    expect(nonPublicReason('2001:0:4136:e378:8000:63bf:3f57:fefe')).toBe('Teredo form of 192.168.1.1, private');
    expect(nonPublicReason('::8.8.8.8')).toBe('IPv4-compatible, ::/96, deprecated');
    expect(nonPublicReason('64:ff9b:1::808:808')).toBe('local-use NAT64, 64:ff9b:1::/48');
  });

  it('refuses a Teredo address whose server address is not public', () => {
    // Server 10.0.0.1, client 8.8.8.8 (stored inverted).
    expect(nonPublicReason('2001:0:a00:1:0:0:f7f7:f7f7')).toBe('Teredo form of 10.0.0.1, private');
  });

  it.each([
    ['IPv4-mapped', '::ffff:8.8.8.8'],
    ['IPv4-translated', '::ffff:0:808:808'],
    ['well-known NAT64 (what DNS64 answers on an IPv6-only network)', '64:ff9b::5db8:d822'],
    ['6to4', '2002:808:808::1'],
    ['Teredo, public server and client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['ISATAP', '2a01:4f8::5efe:808:808'],
  ])('the %s form of a public IPv4 address (%s) is public', (_form, address) => {
    expect(nonPublicReason(address)).toBeUndefined();
  });
});

describe('IPv6 ranges', () => {
  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12::1', 'unique local (private)'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'outside global unicast (2000::/3)'],
    ['5f00::1', 'outside global unicast (2000::/3)'],
  ])('%s is refused: %s', (address, why) => expect(nonPublicReason(address)).toBe(why));

  it.each(['2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('%s is public', (address) =>
    expect(nonPublicReason(address)).toBeUndefined(),
  );

  it('refuses what is not an IP address', () => {
    expect(nonPublicReason('example.org')).toBe('not an IP address');
    expect(nonPublicReason('::ffff:999.0.0.1')).toBe('not an IP address');
  });
});
