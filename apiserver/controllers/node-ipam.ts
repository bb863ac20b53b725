// kube-controller-manager's node-ipam-controller (--allocate-node-cidrs,
// RangeAllocator): every Node gets one podCIDR per --cluster-cidr entry (two
// for dual stack, one per family) of the family's --node-cidr-mask-size when
// it registers, kept while the Node exists and freed when it is deleted. An
// exhausted range is an event on the Node and a log line, as upstream.
import {
  anyCidrsOverlap,
  bigIntToIp,
  familyOfText,
  type IPFamily,
  ipInAnyCidr,
  parseAnyCidr,
  perFamilyCidrs,
} from '../../kube/cidr.js';
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';

/** One cluster CIDR of either family cut into subnets of `maskSize` bits (upstream's CidrSet). */
export class CidrSet {
  readonly v6: boolean;
  readonly base: bigint;
  readonly clusterBits: number;
  readonly count: number;
  private readonly used = new Set<number>();
  private next = 0;

  constructor(
    readonly clusterCidr: string,
    readonly maskSize: number,
    /** The flag the mask came from, for errors. */
    flag = '--node-cidr-mask-size',
  ) {
    let r;
    try {
      r = parseAnyCidr(clusterCidr);
    } catch {
      throw new Error(`--cluster-cidr: invalid CIDR ${JSON.stringify(clusterCidr)}`);
    }
    this.v6 = r.v6;
    this.clusterBits = r.bits;
    const max = r.v6 ? 126 : 30;
    if ((!r.v6 && this.clusterBits < 8) || this.clusterBits > max)
      throw new Error(`--cluster-cidr: invalid prefix length in ${clusterCidr}`);
    if (!Number.isInteger(maskSize) || maskSize < this.clusterBits || maskSize > max)
      throw new Error(
        `${flag}: ${maskSize} must be between the cluster CIDR's prefix (${this.clusterBits}) and ${max}`,
      );
    if (maskSize - this.clusterBits > 16)
      throw new Error(
        `${flag}: ${maskSize} is more than 16 bits longer than the cluster CIDR's prefix /${this.clusterBits}`,
      );
    this.base = r.base;
    this.count = 2 ** (maskSize - this.clusterBits);
  }

  get family(): IPFamily {
    return this.v6 ? 'IPv6' : 'IPv4';
  }

  private get subnetSize(): bigint {
    return 1n << BigInt((this.v6 ? 128 : 32) - this.maskSize);
  }

  private cidrOf(i: number): string {
    return `${bigIntToIp(this.base + BigInt(i) * this.subnetSize, this.v6)}/${this.maskSize}`;
  }

  /** The index of a subnet of this set, or undefined for anything else. */
  indexOf(cidr: string): number | undefined {
    let r;
    try {
      r = parseAnyCidr(cidr);
    } catch {
      return undefined;
    }
    if (r.v6 !== this.v6 || r.bits !== this.maskSize) return undefined;
    const off = r.base - this.base;
    if (off < 0n || off % this.subnetSize !== 0n || off / this.subnetSize >= BigInt(this.count)) return undefined;
    return Number(off / this.subnetSize);
  }

  /** Marks a subnet a Node already has as taken; false if it is not one of ours or already taken. */
  occupy(cidr: string): boolean {
    const i = this.indexOf(cidr);
    if (i === undefined || this.used.has(i)) return false;
    this.used.add(i);
    return true;
  }

  /** The next free subnet (round-robin from the last one given), or undefined when all are taken. */
  allocate(): string | undefined {
    for (let k = 0; k < this.count; k++) {
      const i = (this.next + k) % this.count;
      if (!this.used.has(i)) {
        this.used.add(i);
        this.next = i + 1;
        return this.cidrOf(i);
      }
    }
    return undefined;
  }

  release(cidr: string): void {
    const i = this.indexOf(cidr);
    if (i !== undefined) this.used.delete(i);
  }
}

export interface NodeIpamOptions {
  /** --cluster-cidr: one CIDR, or two of different families (dual stack). */
  clusterCidr: string;
  /** --node-cidr-mask-size (single stack only). Default 24 for IPv4, 64 for IPv6. */
  nodeCidrMaskSize?: number;
  /** --node-cidr-mask-size-ipv4 / -ipv6 (dual stack). Defaults 24 and 64. */
  nodeCidrMaskSizeIPv4?: number;
  nodeCidrMaskSizeIPv6?: number;
}

/** The CidrSets of --cluster-cidr and the mask flags, in the flag's order (upstream's checks and defaults). */
export function cidrSets(o: NodeIpamOptions): CidrSet[] {
  const cidrs = perFamilyCidrs(o.clusterCidr, '--cluster-cidr');
  const v6 = (c: string): boolean => familyOfText(c) === 'IPv6';
  if (cidrs.length === 2) {
    if (o.nodeCidrMaskSize !== undefined)
      throw new Error('usage of --node-cidr-mask-size is not allowed with dual-stack clusters');
    return cidrs.map((c) =>
      v6(c)
        ? new CidrSet(c, o.nodeCidrMaskSizeIPv6 ?? 64, '--node-cidr-mask-size-ipv6')
        : new CidrSet(c, o.nodeCidrMaskSizeIPv4 ?? 24, '--node-cidr-mask-size-ipv4'),
    );
  }
  const c = cidrs[0]!;
  return [
    new CidrSet(c, o.nodeCidrMaskSize ?? (v6(c) ? (o.nodeCidrMaskSizeIPv6 ?? 64) : (o.nodeCidrMaskSizeIPv4 ?? 24))),
  ];
}

/**
 * The pod ranges' sanity checks, before anything starts: valid ranges and masks, clear of the Service ranges and
 * of the addresses nodes are reached at (a podCIDR there would steal their traffic).
 */
export function validateClusterCidr(o: NodeIpamOptions, serviceCidr: string, nodeIPs: string[] = []): void {
  for (const set of cidrSets(o)) {
    const c = set.clusterCidr;
    for (const svc of serviceCidr
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean))
      if (anyCidrsOverlap(c, svc)) throw new Error(`--cluster-cidr ${c} overlaps --service-cluster-ip-range ${svc}`);
    const inside = nodeIPs.find((ip) => ipInAnyCidr(ip, c));
    if (inside)
      throw new Error(
        `--cluster-cidr ${c} covers the node address ${inside}: pick a pod range outside the nodes' network`,
      );
  }
}

export class NodeIpamController {
  private readonly nodes: Informer;
  private readonly sets: CidrSet[];
  /** podCIDRs per Node name, as this controller knows them. */
  private readonly owned = new Map<string, string[]>();
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    o: NodeIpamOptions,
  ) {
    this.sets = cidrSets(o);
    const queue = (n: KObj): void => {
      this.pending = this.pending
        .then(() => this.sync(n))
        .catch((e: Error) => this.log.warn(`node-ipam: ${n.metadata.name}: ${e.message}`));
    };
    this.nodes = new Informer(client, {
      path: '/api/v1/nodes',
      onAdd: queue,
      onUpdate: queue,
      onDelete: (n) => {
        this.release(this.owned.get(n.metadata.name) ?? []);
        this.owned.delete(n.metadata.name);
        // A freed subnet may be what a waiting Node needs.
        for (const w of this.nodes.list()) if (!w.spec?.podCIDR && !this.owned.has(w.metadata.name)) queue(w);
      },
      onError: (e) => log.warn(`node-ipam: watch: ${e.message}`),
    });
  }

  private setOf(cidr: string): CidrSet | undefined {
    return this.sets.find((s) => s.family === familyOfText(cidr));
  }

  private release(cidrs: string[]): void {
    for (const c of cidrs) this.setOf(c)?.release(c);
  }

  /** A Node's podCIDRs (or its podCIDR). */
  private static has(n: KObj): string[] {
    const list = (n.spec?.podCIDRs as string[] | undefined) ?? (n.spec?.podCIDR ? [n.spec.podCIDR as string] : []);
    return list.filter(Boolean);
  }

  /** Takes a Node's existing podCIDRs into the sets (they are kept as they are, as upstream). */
  private occupy(name: string, has: string[]): void {
    const prev = this.owned.get(name) ?? [];
    if (JSON.stringify(prev) === JSON.stringify(has)) return;
    // Only subnets of our ranges that no other Node holds become this Node's.
    this.owned.set(
      name,
      has.filter((c) => prev.includes(c) || this.setOf(c)?.occupy(c)),
    );
  }

  private async sync(n: KObj): Promise<void> {
    const name = n.metadata.name as string;
    const has = NodeIpamController.has(n);
    if (has.length) return this.occupy(name, has);
    if (this.owned.has(name)) return; // allocated; the update is on its way
    const cidrs: string[] = [];
    for (const set of this.sets) {
      const c = set.allocate();
      if (c) {
        cidrs.push(c);
        continue;
      }
      this.release(cidrs);
      this.log.warn(
        `node-ipam: no remaining CIDRs in ${set.clusterCidr} for node ${name} (${set.count} subnets of /${set.maskSize} all taken)`,
      );
      this.events.event(
        { kind: 'Node', name, uid: n.metadata.uid },
        'Normal',
        'CIDRNotAvailable',
        `Node ${name} status is now: CIDRNotAvailable`,
      );
      return;
    }
    this.owned.set(name, cidrs);
    try {
      await this.client.patch(`/api/v1/nodes/${name}`, { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } }, 'merge');
      this.log.info(`node-ipam: node ${name} gets podCIDR${cidrs.length > 1 ? 's' : ''} ${cidrs.join(',')}`);
    } catch (e) {
      this.owned.delete(name);
      this.release(cidrs);
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
  }

  async start(): Promise<void> {
    await this.nodes.start();
    // Nodes that already hold podCIDRs keep them: occupy those first, then give out the rest.
    for (const n of this.nodes.list()) {
      const has = NodeIpamController.has(n);
      if (has.length) this.occupy(n.metadata.name, has);
    }
    for (const n of this.nodes.list())
      this.pending = this.pending
        .then(() => this.sync(n))
        .catch((e: Error) => this.log.warn(`node-ipam: ${e.message}`));
  }

  async stop(): Promise<void> {
    await this.nodes.stop();
    await this.pending;
  }
}
