// IPv4 CIDR arithmetic shared by the Service allocators, node IPAM and the pod network.
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
  return ((ipToNumber(ip) & mask) >>> 0) === ((ipToNumber(addr) & mask) >>> 0);
}
