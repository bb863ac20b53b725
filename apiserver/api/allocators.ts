// ClusterIP and NodePort allocation for Services. A ClusterIP range is one
// CIDR of either family; a dual-stack apiserver has one allocator per family.
import { bigIntToIp, type IPFamily, ipToBigInt, parseAnyCidr, perFamilyCidrs } from '../../kube/cidr.js';

export class IpAllocator {
  private readonly used = new Set<bigint>();
  private next = 1n;
  private readonly range: { v6: boolean; base: bigint; size: bigint; bits: number };
  readonly family: IPFamily;

  constructor(readonly cidr: string) {
    this.range = parseAnyCidr(cidr);
    this.family = this.range.v6 ? 'IPv6' : 'IPv4';
    // Upstream's limits: an IPv4 range of at least 8 addresses, an IPv6 one of at most 2^20.
    if (!this.range.v6 && (this.range.bits < 8 || this.range.bits > 30)) throw new Error(`invalid CIDR "${cidr}"`);
    if (this.range.v6 && (this.range.bits < 108 || this.range.bits > 126))
      throw new Error(`the service IP range ${cidr} is too large: for 128-bit addresses the mask must be >= 108`);
  }

  /** The first address, reserved for the `kubernetes` Service. */
  get first(): string {
    return bigIntToIp(this.range.base + 1n, this.range.v6);
  }

  private num(ip: string): bigint | undefined {
    if (ip.includes(':') !== this.range.v6) return undefined;
    try {
      return ipToBigInt(ip);
    } catch {
      return undefined;
    }
  }

  contains(ip: string): boolean {
    const n = this.num(ip);
    // The network address is never handed out; nor, for IPv4, the broadcast address.
    return n !== undefined && n > this.range.base && n < this.range.base + this.range.size - (this.range.v6 ? 0n : 1n);
  }

  reserve(ip: string): boolean {
    const n = this.num(ip);
    if (n === undefined || !this.contains(ip) || this.used.has(n)) return false;
    this.used.add(n);
    return true;
  }

  allocate(): string {
    const slots = this.range.size - (this.range.v6 ? 1n : 2n);
    for (let i = 0n; i < slots; i++) {
      const off = ((this.next + i - 1n) % slots) + 1n;
      const n = this.range.base + off;
      if (!this.used.has(n)) {
        this.used.add(n);
        this.next = off + 1n;
        return bigIntToIp(n, this.range.v6);
      }
    }
    throw new Error(`range ${this.cidr} is full`);
  }

  release(ip: string): void {
    const n = this.num(ip);
    if (n !== undefined) this.used.delete(n);
  }
}

export class PortAllocator {
  private readonly used = new Set<number>();
  constructor(
    readonly min = 30000,
    readonly max = 32767,
  ) {}
  reserve(p: number): boolean {
    if (p < this.min || p > this.max || this.used.has(p)) return false;
    this.used.add(p);
    return true;
  }
  allocate(): number {
    for (let p = this.min; p <= this.max; p++) if (!this.used.has(p)) return (this.used.add(p), p);
    throw new Error('no NodePorts left');
  }
  release(p: number): void {
    this.used.delete(p);
  }
}

/** --service-cluster-ip-range: one CIDR, or two of different families (dual stack, the first one primary). */
export const serviceCidrs = (flag: string): string[] => perFamilyCidrs(flag, '--service-cluster-ip-range');
