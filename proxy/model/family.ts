// IP families, as a dual-stack kube-proxy splits its world: each family gets
// its own rules (iptables / ip6tables, `table ip` / `table ip6`), built from
// the Service addresses and the EndpointSlices of that family only.
import net from 'node:net';

import { bigIntToIp, type IPFamily, ipInAnyCidr, ipToBigInt } from '../../kube/cidr.js';

export type { IPFamily };
export const IP_FAMILIES: readonly IPFamily[] = ['IPv4', 'IPv6'];

/** The family of an address (no prefix), or undefined when it is not one. */
export function familyOf(ip: string): IPFamily | undefined {
  const v = net.isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

/** A Node's InternalIP addresses, in its order (upstream's node IPs: the first decides the primary family). */
export const nodeInternalIPs = (node: { status?: { addresses?: unknown } }): string[] =>
  ((node.status?.addresses ?? []) as { type?: string; address?: string }[])
    .filter((a) => a.type === 'InternalIP' && a.address)
    .map((a) => a.address!);

/** 0.0.0.0 or :: (any form): an address that names no node. */
export const isUnspecified = (ip: string): boolean => !!familyOf(ip) && ipToBigInt(ip) === 0n;

/**
 * The proxy's primary IP family, as upstream decides it: the family of --bind-address when that names an address,
 * else that of the node's first IP, else IPv4.
 */
export function primaryFamily(nodeIPs: readonly string[], bindAddress: string): IPFamily {
  if (!isUnspecified(bindAddress)) {
    const bound = familyOf(bindAddress);
    if (bound) return bound;
  }
  return familyOf(nodeIPs[0] ?? '') ?? 'IPv4';
}

/** The node IP of a family: --bind-address when it names one of that family (upstream's override), else the Node's. */
export function nodeIPOf(family: IPFamily, nodeIPs: readonly string[], bindAddress: string): string {
  if (familyOf(bindAddress) === family && !isUnspecified(bindAddress)) return canonicalIP(bindAddress);
  return nodeIPs.find((ip) => familyOf(ip) === family) ?? '';
}

/** The family of "addr/len" (or a bare address). */
export const cidrFamily = (cidr: string): IPFamily | undefined => familyOf(cidr.split('/')[0]!.trim());

/** Go's net.JoinHostPort: "10.0.0.1:80", "[fd00::1]:80" (upstream endpoint strings, hashed into chain names). */
export const joinHostPort = (ip: string, port: number): string =>
  ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

/** Whether a CIDR of either family contains an address of the same family; false for anything malformed. */
export function cidrContains(cidr: string, ip: string): boolean {
  if (!familyOf(ip) || !familyOf(cidr.split('/')[0] ?? '')) return false;
  try {
    return ipInAnyCidr(ip, cidr.includes('/') ? cidr : `${cidr}/${ip.includes(':') ? 128 : 32}`);
  } catch {
    return false;
  }
}

/** The entries of a comma-separated list (or a list) of addresses or CIDRs that are of one family. */
export function ofFamily(values: string[] | string | undefined, family: IPFamily): string[] {
  const list = typeof values === 'string' ? values.split(',') : (values ?? []);
  return list
    .map((v) => v.trim())
    .filter((v) => v && cidrFamily(v) === family)
    .map(canonicalCIDR);
}

/** The loopback range of a family, which NodePort rules leave out. */
export const loopback = (family: IPFamily): string => (family === 'IPv4' ? '127.0.0.0/8' : '::1/128');

/**
 * An address as nft and ip6tables print it (RFC 5952 for IPv6: "FD00:10::0001" is "fd00:10::1"), so that keys the
 * proxy renders match what a listing of the kernel returns. IPv4, and anything unparsable, stays as it is.
 */
export function canonicalIP(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return bigIntToIp(ipToBigInt(ip), true);
  } catch {
    return ip;
  }
}

/** canonicalIP of a CIDR's address part. */
export const canonicalCIDR = (cidr: string): string => {
  const [a, bits] = cidr.split('/');
  return bits === undefined ? canonicalIP(a!) : `${canonicalIP(a!)}/${bits}`;
};
