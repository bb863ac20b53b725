// Which clients the DNS server answers, as a CoreDNS `acl` block: the --allow-from ranges (the pod and Service
// ranges), the cluster's node addresses, this host's own addresses and loopback. Everyone else gets REFUSED, so the
// server is no open resolver on the node's address and does not list the cluster's Services to the LAN.
import { isIP } from 'node:net';
import os from 'node:os';

import { checkableIP, cidrBlockList } from '../kube/cidr.js';

export class ClientAcl {
  private readonly allowed;
  /** The cluster's node addresses by node: pods on other nodes reach this server masqueraded to their node's address. */
  private readonly nodes = new Map<string, string[]>();
  private nodeAddresses = new Set<string>();

  constructor(cidrs: string[], hostAddresses: string[] = localAddresses()) {
    this.allowed = cidrBlockList(['127.0.0.0/8', '::1/128', ...cidrs, ...hostAddresses]);
  }

  /** A node's addresses, or none when it is gone. */
  setNode(name: string, addresses: string[]): void {
    if (addresses.length) this.nodes.set(name, addresses);
    else this.nodes.delete(name);
    this.nodeAddresses = new Set([...this.nodes.values()].flat());
  }

  allows(address: string): boolean {
    const a = checkableIP(address);
    return !!a && (this.nodeAddresses.has(a.ip) || this.allowed.check(a.ip, a.type));
  }
}

/** This host's interface addresses (without an IPv6 zone). */
export function localAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .flatMap((a) => (a ? [a.address.replace(/%.*$/, '')] : []));
}

/** Checks --allow-from: IPv4 or IPv6 CIDRs (or single addresses). */
export function parseAllowFrom(list: string[]): string[] {
  for (const c of list) {
    const [net, bits] = c.split('/') as [string, string | undefined];
    const family = isIP(net);
    const max = family === 6 ? 128 : 32;
    if (!family || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max)))
      throw new Error(`--allow-from: "${c}" is not a CIDR`);
  }
  return list;
}
