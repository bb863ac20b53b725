// CIDR arithmetic shared by the Service allocators, node IPAM, the pod network and the proxy: IPv4 as numbers,
// either family as bigints, and BlockLists of CIDRs to check addresses against (externalIPs, the DNS ACL).

import { BlockList, isIP } from 'node:net';

export type IPFamily = 'IPv4' | 'IPv6';

/** CIDRs (or single addresses) of either family as a BlockList to check addresses against. */
export function cidrBlockList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split('/') as [string, string | undefined];
    const type = net.includes(':') ? 'ipv6' : 'ipv4';
    list.addSubnet(net, bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits), type);
  }
  return list;
}

/**
 * An address as Go's net.IP reads it, for a BlockList check: an IPv4-mapped IPv6 address (::ffff:a.b.c.d, as an IPv4
 * client on a dual-stack socket arrives) is its IPv4 address. Undefined when it is no IP address.
 */
export function checkableIP(address: string): { ip: string; type: 'ipv4' | 'ipv6' } | undefined {
  const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
  const family = isIP(ip);
  return family === 0 ? undefined : { ip, type: family === 6 ? 'ipv6' : 'ipv4' };
}

/** The family an address or CIDR is written in (a colon means IPv6); no validation. */
export const familyOfText = (ip: string): IPFamily => (ip.includes(':') ? 'IPv6' : 'IPv4');
export function parseCidr(cidr: string): { base: number; size: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr.trim());
  if (!m) throw new Error(`invalid CIDR "${cidr}": only IPv4 is supported`);
  const ip = m.slice(1, 5).map(Number);
  const bits = Number(m[5]);
  if (ip.some((o) => o > 255) || bits < 8 || bits > 30) throw new Error(`invalid CIDR "${cidr}"`);
  const n = ((ip[0]! << 24) | (ip[1]! << 16) | (ip[2]! << 8) | ip[3]!) >>> 0;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { base: (n & mask) >>> 0, size: 2 ** (32 - bits) };
}

export const ipToString = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
export function ipToNumber(ip: string): number {
  return ip.split('.').reduce((a, o) => ((a << 8) | Number(o)) >>> 0, 0);
}

/** Whether two IPv4 CIDRs overlap (a podCIDR range must not cover the Service range). */
export function cidrsOverlap(a: string, b: string): boolean {
  const r = (c: string) => {
    const { base, size } = parseCidr(c);
    return [base, base + size] as const;
  };
  const [a0, a1] = r(a);
  const [b0, b1] = r(b);
  return a0 < b1 && b0 < a1;
}

/** Whether an IPv4 address lies inside a CIDR (any prefix length). */
export function ipInCidr(ip: string, cidr: string): boolean {
  const [addr, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip) || !addr || !Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (ipToNumber(ip) & mask) >>> 0 === (ipToNumber(addr) & mask) >>> 0;
}

/** An IPv4 or IPv6 address as a number (bigint), and back; IPv6 printed in RFC 5952 form ("fd00::a"). */
export function ipToBigInt(ip: string): bigint {
  if (!ip.includes(':')) return BigInt(ipToNumber(ip));
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const parts = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const h = parts(head);
  const t = parts(tail);
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g)))
    throw new Error(`invalid IPv6 address "${ip}"`);
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

export function bigIntToIp(n: bigint, v6: boolean): string {
  if (!v6) return ipToString(Number(n));
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups becomes "::" (the first one on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (g: number[]): string => g.map((x) => x.toString(16)).join(':');
  return best < 0 ? hex(groups) : `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** A CIDR of either family: its first address and size as bigints. IPv6 ranges of Services stop at /108 as upstream. */
export function parseAnyCidr(cidr: string): { v6: boolean; base: bigint; size: bigint; bits: number } {
  const [addr, bitsText] = cidr.trim().split('/');
  const v6 = (addr ?? '').includes(':');
  const max = v6 ? 128 : 32;
  const bits = Number(bitsText);
  if (!addr || !Number.isInteger(bits) || bits < 0 || bits > max || (!v6 && !/^\d+\.\d+\.\d+\.\d+$/.test(addr)))
    throw new Error(`invalid CIDR "${cidr}"`);
  const n = ipToBigInt(addr);
  const size = 1n << BigInt(max - bits);
  return { v6, base: n - (n % size), size, bits };
}

/** Whether two CIDRs of either family overlap (never across families). */
export function anyCidrsOverlap(a: string, b: string): boolean {
  const x = parseAnyCidr(a);
  const y = parseAnyCidr(b);
  return x.v6 === y.v6 && x.base < y.base + y.size && y.base < x.base + x.size;
}

/** Whether an address of either family lies inside a CIDR of the same family. */
export function ipInAnyCidr(ip: string, cidr: string): boolean {
  const c = parseAnyCidr(cidr);
  if (ip.includes(':') !== c.v6) return false;
  try {
    const n = ipToBigInt(ip);
    return n >= c.base && n < c.base + c.size;
  } catch {
    return false;
  }
}

/**
 * A flag of one CIDR, or two of different families for dual stack (--service-cluster-ip-range, --cluster-cidr), as
 * kube-apiserver and kube-controller-manager take them; the first is the primary.
 */
export function perFamilyCidrs(value: string, flag: string): string[] {
  const cidrs = value
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (!cidrs.length) throw new Error(`${flag}: a CIDR is required`);
  if (cidrs.length > 2) throw new Error(`${flag}: "${value}" may hold at most two CIDRs (one per IP family)`);
  if (cidrs.length === 2 && familyOfText(cidrs[0]!) === familyOfText(cidrs[1]!))
    throw new Error(`${flag}: "${value}": the two CIDRs must be of different IP families`);
  return cidrs;
}
