/**
 * A mirror URL's rules, as GitLab's URL blocker applies them to remote mirrors: allowed schemes, a user
 * name that cannot pass for an option, and no local addresses unless the administrator allows them.
 * The credentials are split off and the URL is kept masked (`https://*****:*****@host/path`).
 */
import dns from 'node:dns/promises';
import net from 'node:net';

export const MASK = '*****';
const SCHEMES = ['http', 'https', 'ssh', 'git'];

export interface ParsedMirrorUrl {
  /** The URL as it is stored and shown: user info replaced by asterisks. */
  masked: string;
  user: string | null;
  password: string | null;
}

/** The rule a URL breaks, in GitLab's words, or null. */
export type UrlProblem = string;

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('0.0.0.0', 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');
const LINK_LOCAL = new net.BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');
const LOCAL_NETWORK = new net.BlockList();
for (const [address, prefix] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
] as const)
  LOCAL_NETWORK.addSubnet(address, prefix, 'ipv4');
LOCAL_NETWORK.addSubnet('fc00::', 7, 'ipv6');

/** An IPv4-mapped IPv6 address is checked as the IPv4 address it carries. */
function family(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1], type: 'ipv4' };
  return { address, type: net.isIPv6(address) ? 'ipv6' : 'ipv4' };
}

/** What the local-request rule says of one address (a resolved one, or an IP literal). */
export function addressProblem(raw: string): UrlProblem | null {
  const { address, type } = family(raw);
  if (LOOPBACK.check(address, type)) return 'is blocked: Requests to localhost are not allowed';
  if (LINK_LOCAL.check(address, type))
    return 'is blocked: Requests to the link local network are not allowed';
  if (LOCAL_NETWORK.check(address, type)) return 'is blocked: Requests to the local network are not allowed';
  return null;
}

/** Splits the credentials off and masks the URL; the rules that need no network come first. */
export function parseMirrorUrl(text: string): ParsedMirrorUrl | { problem: UrlProblem } {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { problem: 'is blocked: URI is invalid' };
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!SCHEMES.includes(scheme))
    return { problem: `is blocked: Only allowed schemes are ${SCHEMES.join(', ')}` };
  if (!url.hostname) return { problem: 'is blocked: URI is invalid' };
  let user: string | null;
  let password: string | null;
  try {
    user = url.username ? decodeURIComponent(url.username) : null;
    password = url.password ? decodeURIComponent(url.password) : null;
  } catch {
    return { problem: 'is blocked: URI is invalid' };
  }
  // Credentials reach git's credential protocol, which is line-based.
  if (/[\x00-\x1f\x7f]/.test(`${user ?? ''}${password ?? ''}`))
    return { problem: 'is blocked: URI is invalid' };
  if (user !== null && !/^[a-zA-Z0-9]/.test(user))
    return { problem: 'is blocked: Username needs to start with an alphanumeric character' };
  if (user !== null) url.username = MASK;
  if (password !== null) url.password = MASK;
  return { masked: url.toString(), user, password };
}

/**
 * Whether the host is, or resolves to, a local address. A name that does not resolve passes (GitLab
 * without DNS rebinding protection); the push reports it.
 */
export async function localAddressProblem(
  masked: string,
  { resolve = true }: { resolve?: boolean } = {},
): Promise<UrlProblem | null> {
  const host = new URL(masked).hostname.replace(/^\[|\]$/g, '');
  if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost'))
    return 'is blocked: Requests to localhost are not allowed';
  if (net.isIP(host)) return addressProblem(host);
  // A caller that checks the address it connects to (a `lookup` of its own) needs no resolution here.
  if (!resolve) return null;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await dns.lookup(host, { all: true });
  } catch {
    return null;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address);
    if (problem) return problem;
  }
  return null;
}

/** The URL git is given: the masked one without its user info. */
export function bareUrl(masked: string): string {
  const url = new URL(masked);
  url.username = '';
  url.password = '';
  return url.toString();
}

/** `host` or `[host]:port`, as known_hosts names an SSH server. */
export function knownHostsName(masked: string): string {
  const url = new URL(masked);
  const host = url.hostname;
  return url.port && url.port !== '22' ? `[${host.replace(/^\[|\]$/g, '')}]:${url.port}` : host;
}
