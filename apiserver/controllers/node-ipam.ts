// kube-controller-manager's node-ipam-controller (--allocate-node-cidrs,
// RangeAllocator): every Node gets one podCIDR of --node-cidr-mask-size
// from --cluster-cidr when it registers, kept while the Node exists and
// freed when it is deleted. An exhausted range is an event on the Node and
// a log line, as upstream.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { cidrsOverlap, ipInCidr, ipToNumber, ipToString, parseCidr } from '../../kube/cidr.js';

/** One cluster CIDR cut into subnets of `maskSize` bits (upstream's CidrSet). */
export class CidrSet {
  readonly base: number;
  readonly clusterBits: number;
  readonly count: number;
  private readonly used = new Set<number>();
  private next = 0;

  constructor(
    readonly clusterCidr: string,
    readonly maskSize: number,
  ) {
    const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(clusterCidr.trim());
    if (!m) throw new Error(`--cluster-cidr: invalid CIDR ${JSON.stringify(clusterCidr)} (only IPv4 is supported)`);
    this.clusterBits = Number(m[2]);
    if (this.clusterBits < 8 || this.clusterBits > 30) throw new Error(`--cluster-cidr: invalid prefix length in ${clusterCidr}`);
    if (!Number.isInteger(maskSize) || maskSize < this.clusterBits || maskSize > 30) throw new Error(`--node-cidr-mask-size: ${maskSize} must be between the cluster CIDR's prefix (${this.clusterBits}) and 30`);
    if (maskSize - this.clusterBits > 16) throw new Error(`--node-cidr-mask-size: ${maskSize} is more than 16 bits longer than the cluster CIDR's prefix /${this.clusterBits}`);
    const mask = (~0 << (32 - this.clusterBits)) >>> 0;
    this.base = (ipToNumber(m[1]!) & mask) >>> 0;
    this.count = 2 ** (maskSize - this.clusterBits);
  }

  private cidrOf(i: number): string {
    return `${ipToString(this.base + i * 2 ** (32 - this.maskSize))}/${this.maskSize}`;
  }

  /** The index of a subnet of this set, or undefined for anything else. */
  indexOf(cidr: string): number | undefined {
    const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
    if (!m || Number(m[2]) !== this.maskSize) return undefined;
    const off = ipToNumber(m[1]!) - this.base;
    const size = 2 ** (32 - this.maskSize);
    if (off < 0 || off % size !== 0 || off / size >= this.count) return undefined;
    return off / size;
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

/**
 * The pod range's sanity checks, before anything starts: a valid range and mask, clear of the Service range and
 * of the addresses nodes are reached at (a podCIDR there would steal their traffic).
 */
export function validateClusterCidr(clusterCidr: string, nodeCidrMaskSize: number, serviceCidr: string, nodeIPs: string[] = []): void {
  new CidrSet(clusterCidr, nodeCidrMaskSize);
  if (serviceCidr && cidrsOverlap(clusterCidr, serviceCidr)) throw new Error(`--cluster-cidr ${clusterCidr} overlaps --service-cluster-ip-range ${serviceCidr}`);
  const inside = nodeIPs.find((ip) => ipInCidr(ip, clusterCidr));
  if (inside) throw new Error(`--cluster-cidr ${clusterCidr} covers the node address ${inside}: pick a pod range outside the nodes' network`);
}

export interface NodeIpamOptions {
  clusterCidr: string;
  nodeCidrMaskSize: number;
}

export class NodeIpamController {
  private readonly nodes: Informer;
  private readonly cidrs: CidrSet;
  /** podCIDR per Node name, as this controller knows it. */
  private readonly owned = new Map<string, string>();
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    o: NodeIpamOptions,
  ) {
    this.cidrs = new CidrSet(o.clusterCidr, o.nodeCidrMaskSize);
    const queue = (n: KObj): void => {
      this.pending = this.pending.then(() => this.sync(n)).catch((e: Error) => this.log.warn(`node-ipam: ${n.metadata.name}: ${e.message}`));
    };
    this.nodes = new Informer(client, {
      path: '/api/v1/nodes',
      onAdd: queue,
      onUpdate: queue,
      onDelete: (n) => {
        const c = this.owned.get(n.metadata.name);
        if (c) this.cidrs.release(c);
        this.owned.delete(n.metadata.name);
        // A freed subnet may be what a waiting Node needs.
        for (const w of this.nodes.list()) if (!w.spec?.podCIDR && !this.owned.has(w.metadata.name)) queue(w);
      },
      onError: (e) => log.warn(`node-ipam: watch: ${e.message}`),
    });
  }

  private async sync(n: KObj): Promise<void> {
    const name = n.metadata.name as string;
    const has = (n.spec?.podCIDRs?.[0] ?? n.spec?.podCIDR) as string | undefined;
    if (has) {
      if (this.owned.get(name) !== has && this.cidrs.occupy(has)) this.owned.set(name, has);
      return;
    }
    if (this.owned.has(name)) return; // allocated; the update is on its way
    const cidr = this.cidrs.allocate();
    if (!cidr) {
      this.log.warn(`node-ipam: no remaining CIDRs in ${this.cidrs.clusterCidr} for node ${name} (${this.cidrs.count} subnets of /${this.cidrs.maskSize} all taken)`);
      this.events.event({ kind: 'Node', name, uid: n.metadata.uid }, 'Normal', 'CIDRNotAvailable', `Node ${name} status is now: CIDRNotAvailable`);
      return;
    }
    this.owned.set(name, cidr);
    try {
      await this.client.patch(`/api/v1/nodes/${name}`, { spec: { podCIDR: cidr, podCIDRs: [cidr] } }, 'merge');
      this.log.info(`node-ipam: node ${name} gets podCIDR ${cidr}`);
    } catch (e) {
      this.owned.delete(name);
      this.cidrs.release(cidr);
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
  }

  async start(): Promise<void> {
    await this.nodes.start();
    // Nodes that already hold a podCIDR keep it: occupy those first, then give out the rest.
    for (const n of this.nodes.list()) {
      const has = (n.spec?.podCIDRs?.[0] ?? n.spec?.podCIDR) as string | undefined;
      if (has && this.cidrs.occupy(has)) this.owned.set(n.metadata.name, has);
    }
    for (const n of this.nodes.list()) this.pending = this.pending.then(() => this.sync(n)).catch((e: Error) => this.log.warn(`node-ipam: ${e.message}`));
  }

  async stop(): Promise<void> {
    await this.nodes.stop();
    await this.pending;
  }
}
