import { describe, expect, it } from 'vitest';
import { clientAddress, DEFAULT_MONITORING_ALLOWLIST, parseIpAllowlist } from '../../src/ops/allowlist.js';

describe('monitoring IP allowlist', () => {
  const loopback = parseIpAllowlist(DEFAULT_MONITORING_ALLOWLIST, 'TEST');
  const custom = parseIpAllowlist(' 192.168.0.1 , 10.0.0.0/8,2001:db8::/32 ', 'TEST');

  it.each([
    [loopback, '127.0.0.1', true],
    [loopback, '127.255.0.9', true],
    [loopback, '::1', true],
    [loopback, '::ffff:127.0.0.1', true],
    [loopback, '128.0.0.1', false],
    [loopback, '::2', false],
    [loopback, '203.0.113.7', false],
    [loopback, 'not-an-address', false],
    [loopback, '', false],
    [custom, '192.168.0.1', true],
    [custom, '192.168.0.2', false],
    [custom, '10.200.3.4', true],
    [custom, '::ffff:10.1.1.1', true],
    [custom, '2001:db8:1::5', true],
    [custom, '2001:db9::5', false],
    [custom, '127.0.0.1', false],
  ])('%#: allows %s → %s', (list, address, allowed) => {
    expect(list.allows(address as string)).toBe(allowed);
  });

  it('keeps the entries as configured; an empty list allows nobody', () => {
    expect(custom.entries).toEqual(['192.168.0.1', '10.0.0.0/8', '2001:db8::/32']);
    const nobody = parseIpAllowlist('', 'TEST');
    expect(nobody.entries).toEqual([]);
    expect(nobody.allows('127.0.0.1')).toBe(false);
  });

  it.each(['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/', '10.0.0.0/8/1', '10.0.0.0/x', '300.1.1.1'])(
    'refuses the entry %j, naming the setting',
    (entry) => {
      expect(() => parseIpAllowlist(`127.0.0.1,${entry}`, 'FORGE_MONITORING_ALLOWLIST')).toThrow(
        `FORGE_MONITORING_ALLOWLIST: ${JSON.stringify(entry)} is not an IP address or CIDR range`,
      );
    },
  );
});

describe('client address', () => {
  it.each([
    { peer: '203.0.113.7', forwarded: undefined, client: '203.0.113.7' },
    { peer: '127.0.0.1', forwarded: undefined, client: '127.0.0.1' },
    { peer: '::ffff:127.0.0.1', forwarded: '', client: '127.0.0.1' },
    // A loopback proxy forwarded the client's address.
    { peer: '127.0.0.1', forwarded: '203.0.113.7', client: '203.0.113.7' },
    { peer: '::1', forwarded: '198.51.100.1, 203.0.113.7', client: '203.0.113.7' },
    // Two proxies on the same machine: the nearest non-loopback hop is the client.
    { peer: '127.0.0.1', forwarded: '203.0.113.7, 127.0.0.1', client: '203.0.113.7' },
    // Only loopback hops: the request came from this machine.
    { peer: '127.0.0.1', forwarded: '127.0.0.2', client: '127.0.0.2' },
    // A remote client cannot claim to be local.
    { peer: '203.0.113.7', forwarded: '127.0.0.1', client: '203.0.113.7' },
  ])('peer $peer, X-Forwarded-For $forwarded → $client', ({ peer, forwarded, client }) => {
    expect(clientAddress(peer, forwarded)).toBe(client);
  });
});
