// ClusterIP and NodePort allocation for Services.
import { ipToNumber, ipToString, parseCidr } from '../../kube/cidr.js';
export class IpAllocator {
  private readonly used = new Set<number>();
  private next = 1;
  constructor(readonly cidr: string, private readonly range = parseCidr(cidr)) {}

  /** The first address, reserved for the `kubernetes` Service. */
  get first(): string {
    return ipToString(this.range.base + 1);
  }

  contains(ip: string): boolean {
    const n = ipToNumber(ip);
    return n > this.range.base && n < this.range.base + this.range.size - 1;
  }

  reserve(ip: string): boolean {
    if (!this.contains(ip) || this.used.has(ipToNumber(ip))) return false;
    this.used.add(ipToNumber(ip));
    return true;
  }

  allocate(): string {
    for (let i = 0; i < this.range.size - 2; i++) {
      const off = ((this.next + i - 1) % (this.range.size - 2)) + 1;
      const n = this.range.base + off;
      if (!this.used.has(n)) {
        this.used.add(n);
        this.next = off + 1;
        return ipToString(n);
      }
    }
    throw new Error(`range ${this.cidr} is full`);
  }

  release(ip: string): void {
    this.used.delete(ipToNumber(ip));
  }
}

export class PortAllocator {
  private readonly used = new Set<number>();
  constructor(readonly min = 30000, readonly max = 32767) {}
  reserve(p: number): boolean {
    if (p < this.min || p > this.max || this.used.has(p)) return false;
    this.used.add(p);
    return true;
  }
  allocate(): number {
    for (let p = this.min; p <= this.max; p++) if (!this.used.has(p)) return this.used.add(p), p;
    throw new Error('no NodePorts left');
  }
  release(p: number): void {
    this.used.delete(p);
  }
}
