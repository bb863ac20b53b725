// Which clients the DNS server answers, as a CoreDNS `acl` block: the --allow-from ranges (the pod and Service
// ranges), the cluster's node addresses, this host's own addresses and loopback. Everyone else gets REFUSED, so the server is no open resolver
// on the node's address and does not list the cluster's Services to the LAN.
import { BlockList, isIP } from 'node:net';
import os from 'node:os';

export class ClientAcl {
  private readonly allowed = new BlockList();
  /** The cluster's node addresses: pods on other nodes reach this server masqueraded to their node's address. */
  private nodes = new Set<string>();

  constructor(cidrs: string[], hostAddresses: string[] = localAddresses()) {
    for (const c of ['127.0.0.0/8', '::1/128', ...cidrs]) {
      const [net, bits] = c.split('/') as [string, string | undefined];
      const type = net.includes(':') ? 'ipv6' : 'ipv4';
      this.allowed.addSubnet(net, bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits), type);
    }
    for (const ip of hostAddresses) this.allowed.addAddress(ip, ip.includes(':') ? 'ipv6' : 'ipv4');
  }

  setNodeAddresses(addresses: Iterable<string>): void {
    this.nodes = new Set(addresses);
  }

  allows(address: string): boolean {
    // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d.
    const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
    const family = isIP(ip);
    return family !== 0 && (this.nodes.has(ip) || this.allowed.check(ip, family === 6 ? 'ipv6' : 'ipv4'));
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
    if (!family || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > max))) throw new Error(`--allow-from: "${c}" is not a CIDR`);
  }
  return list;
}
