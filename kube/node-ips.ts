// The kubelet's --node-ip as upstream parses it: one address, or a dual-stack
// pair (one IPv4, one IPv6; the first is the primary), with upstream's errors.
import net from 'node:net';

import { bigIntToIp, ipToBigInt } from './cidr.js';

/** The node's addresses from --node-ip ("" → none: the caller picks one); IPv6 in its RFC 5952 form. */
export function parseNodeIPs(value: string): string[] {
  const parts = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const ips = parts.map((p) => {
    if (!net.isIP(p)) throw new Error(`bad --node-ip ${JSON.stringify(value)}; could not parse ${JSON.stringify(p)}`);
    return p.includes(':') ? bigIntToIp(ipToBigInt(p), true) : p;
  });
  if (ips.length > 2 || (ips.length === 2 && ips[0]!.includes(':') === ips[1]!.includes(':'))) {
    throw new Error(
      `bad --node-ip ${JSON.stringify(value)}; must contain either a single IP or a dual-stack pair of IPs`,
    );
  }
  if (ips.length === 2 && ips.some((ip) => ip === '0.0.0.0' || ip === '::'))
    throw new Error(`dual-stack --node-ip ${JSON.stringify(value)} cannot include '0.0.0.0' or '::'`);
  return ips;
}
