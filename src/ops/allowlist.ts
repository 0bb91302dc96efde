import net from 'node:net';

/** GitLab's default monitoring IP allowlist: the loopback interface only. */
export const DEFAULT_MONITORING_ALLOWLIST = '127.0.0.0/8,::1/128';

/** A list of addresses and CIDR ranges, IPv4 and IPv6, as GitLab's `monitoring.ip_whitelist`. */
export interface IpAllowlist {
  /** The entries as configured, for logs and errors. */
  readonly entries: readonly string[];
  allows(address: string): boolean;
}

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) is `127.0.0.1`. */
function plainAddress(address: string): string {
  return MAPPED_IPV4.exec(address)?.[1] ?? address;
}

const family = (address: string) => (net.isIP(address) === 6 ? 'ipv6' : 'ipv4');

/**
 * Parses `127.0.0.0/8,::1/128,192.168.0.1`: comma-separated addresses and CIDR ranges. An empty list
 * allows nobody. A malformed entry throws, naming `setting`, so a typo fails the start, not silently.
 */
export function parseIpAllowlist(text: string, setting: string): IpAllowlist {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const list = new net.BlockList();
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const version = net.isIP(address);
    const bits = version === 6 ? 128 : 32;
    const length = prefix === undefined ? bits : Number(prefix);
    if (version === 0 || rest.length > 0 || !/^\d+$/.test(prefix ?? '0') || length > bits)
      throw new Error(`${setting}: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    list.addSubnet(address, length, version === 6 ? 'ipv6' : 'ipv4');
  }
  return {
    entries,
    allows(address: string) {
      const plain = plainAddress(address);
      return net.isIP(plain) !== 0 && list.check(plain, family(plain));
    },
  };
}

const LOOPBACK = parseIpAllowlist(DEFAULT_MONITORING_ALLOWLIST, 'loopback');

/**
 * The client's address, as GitLab's request IP: the peer's address, unless the peer is a proxy on the
 * loopback interface, in which case the address it forwarded in `X-Forwarded-For` (read from the right,
 * past further loopback proxies). A client that is not on the loopback interface cannot claim another
 * address with the header, so the allowlist cannot be passed by spoofing it.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined): string {
  const hops = (forwardedFor ?? '')
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean);
  let address = plainAddress(peer);
  while (hops.length > 0 && LOOPBACK.allows(address)) address = plainAddress(hops.pop()!);
  return address;
}
