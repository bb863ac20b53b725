// The kubelet's cgroup side (upstream pkg/kubelet/cm): the QoS hierarchy
// made at start, with the node-allocatable limit on kubepods; a pod<uid>
// cgroup with the pod's limits before its sandbox runs, named to the CRI as
// the sandbox's cgroup_parent; the Burstable class's shares kept to what its
// pods request; pod cgroups removed with their pods and orphans swept.
// With the systemd driver, systemd makes the slices when runc asks for the
// first scope in them; the kubelet then writes the limits into them.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import type { Logger } from '../../kube/log.js';
import { podQos } from '../../kube/pod-qos.js';
import { workingSet } from '../eviction/observe.js';
import {
  type CgroupDriver,
  type CgroupName,
  cgroupParent,
  cgroupPath,
  kubepods,
  parseCgroupRoot,
  podCgroup,
  podUidOf,
  qosCgroup,
  type QosClass,
} from './cgroup-names.js';
import { CgroupTree } from './cgroupfs.js';
import {
  burstableShares,
  type CgroupResources,
  milliCpuToShares,
  MIN_SHARES,
  oomScoreAdj,
  podCgroupResources,
} from './pod-cgroup-config.js';

export interface CgroupOptions {
  cgroupDriver: CgroupDriver;
  cgroupsPerQOS: boolean;
  cgroupRoot: string;
  /** 'pods' puts the node-allocatable limit on kubepods; 'none' (or nothing) leaves it unlimited. */
  enforceNodeAllocatable: string[];
  podPidsLimit: number;
  /** The cgroup filesystem (a fake tree in tests). */
  cgroupMount?: string;
}

/** What the node has and keeps back, in millicores and bytes. */
export interface NodeResources {
  cpuMilli: number;
  memory: number;
  reservedCpuMilli: number;
  reservedMemory: number;
}

const QOS: QosClass[] = ['Guaranteed', 'Burstable', 'BestEffort'];

export class ContainerManager {
  readonly tree: CgroupTree;
  private readonly root: CgroupName;

  constructor(
    readonly o: CgroupOptions,
    private readonly node: NodeResources,
    private readonly log: Logger,
  ) {
    this.tree = new CgroupTree(o.cgroupMount);
    this.root = parseCgroupRoot(o.cgroupRoot, o.cgroupDriver);
  }

  private path(name: CgroupName): string {
    return cgroupPath(name, this.o.cgroupDriver);
  }

  /** The kubepods cgroup's path in the hierarchies. */
  kubepodsPath(): string {
    return this.path(kubepods(this.root));
  }

  /** kubepods: CPU shares for what pods may use, and with enforceNodeAllocatable=pods, memory capacity less the reservations. */
  kubepodsResources(): CgroupResources {
    const enforce = this.o.enforceNodeAllocatable.includes('pods');
    return {
      cpuShares: milliCpuToShares(this.node.cpuMilli - (enforce ? this.node.reservedCpuMilli : 0)),
      ...(enforce ? { memoryLimit: this.node.memory - this.node.reservedMemory } : {}),
    };
  }

  /** The QoS hierarchy; with the systemd driver, whatever of it systemd has already made. */
  async start(): Promise<void> {
    if (!this.o.cgroupsPerQOS) return;
    const make = this.o.cgroupDriver === 'cgroupfs';
    const apply = async (name: CgroupName, r: CgroupResources): Promise<void> => {
      if (make) await this.tree.ensure(this.path(name), r);
      else if (this.tree.exists(this.path(name))) await this.tree.set(this.path(name), r);
    };
    await apply(kubepods(this.root), this.kubepodsResources());
    await apply(qosCgroup(this.root, 'Burstable'), { cpuShares: MIN_SHARES });
    await apply(qosCgroup(this.root, 'BestEffort'), { cpuShares: MIN_SHARES });
    this.log.info(
      `cgroups: v${this.tree.version}, driver ${this.o.cgroupDriver}, pods under ${this.path(kubepods(this.root))}`,
    );
  }

  /** The sandbox's cgroup_parent ('' without cgroupsPerQOS: the runtime's default). */
  parentName(pod: Pod): string {
    if (!this.o.cgroupsPerQOS) return '';
    return cgroupParent(podCgroup(this.root, podQos(pod), pod.metadata!.uid!), this.o.cgroupDriver);
  }

  /** The memory the pod's cgroup uses now (bytes), if it exists: what a lowered pod memory limit is checked against. */
  async podMemoryUsage(pod: Pod): Promise<number | undefined> {
    if (!this.o.cgroupsPerQOS) return undefined;
    const p = this.path(podCgroup(this.root, podQos(pod), pod.metadata!.uid!));
    const file = this.tree.version === 1 ? 'memory.usage_in_bytes' : 'memory.current';
    const usage = await this.tree.read(p, 'memory', file);
    return usage === undefined ? undefined : Number(usage);
  }

  /** The pod's limits again (an in-place resize), if its cgroup exists. */
  async updatePod(pod: Pod): Promise<void> {
    if (!this.o.cgroupsPerQOS) return;
    const p = this.path(podCgroup(this.root, podQos(pod), pod.metadata!.uid!));
    if (this.tree.exists(p)) await this.tree.set(p, podCgroupResources(pod, { podPidsLimit: this.o.podPidsLimit }));
  }

  /** The sandbox's cgroup_parent, the pod cgroup made and limited first ('' without cgroupsPerQOS: the runtime's default). */
  async podParent(pod: Pod): Promise<string> {
    if (!this.o.cgroupsPerQOS) return '';
    if (this.o.cgroupDriver === 'cgroupfs')
      await this.tree.ensure(
        this.path(podCgroup(this.root, podQos(pod), pod.metadata!.uid!)),
        podCgroupResources(pod, { podPidsLimit: this.o.podPidsLimit }),
      );
    return this.parentName(pod);
  }

  /** After the sandbox runs: with systemd, its pod slice now exists and gets its limits. */
  async afterSandbox(pod: Pod): Promise<void> {
    if (!this.o.cgroupsPerQOS || this.o.cgroupDriver !== 'systemd') return;
    const p = this.path(podCgroup(this.root, podQos(pod), pod.metadata!.uid!));
    if (this.tree.exists(p)) await this.tree.set(p, podCgroupResources(pod, { podPidsLimit: this.o.podPidsLimit }));
  }

  /** A container's oom_score_adj (upstream's QoS ordering under memory pressure). */
  oomScoreAdj(pod: Pod, c: Container): number {
    return oomScoreAdj(pod, c, this.node.memory);
  }

  private lastBurstableShares = -1;

  /** The Burstable class's CPU shares follow what its pods request (written when they change). */
  async updateQos(pods: Pod[]): Promise<void> {
    if (!this.o.cgroupsPerQOS) return;
    const shares = burstableShares(pods);
    if (shares === this.lastBurstableShares) return;
    const p = this.path(qosCgroup(this.root, 'Burstable'));
    if (!this.tree.exists(p)) return;
    await this.tree.set(p, { cpuShares: shares });
    this.lastBurstableShares = shares;
  }

  /** A pod's cgroup path, wherever its class put it (undefined without one). */
  async podCgroupPath(uid: string): Promise<string | undefined> {
    if (!this.o.cgroupsPerQOS) return undefined;
    return QOS.map((q) => this.path(podCgroup(this.root, q, uid))).find((p) => this.tree.exists(p));
  }

  /** A pod cgroup's memory working set (undefined without one). */
  async podWorkingSet(uid: string): Promise<number | undefined> {
    const p = await this.podCgroupPath(uid);
    return p === undefined ? undefined : workingSet(this.tree, p);
  }

  /** Removes a pod's cgroup, wherever its class put it. */
  async removePod(uid: string): Promise<void> {
    if (!this.o.cgroupsPerQOS) return;
    for (const q of QOS) {
      const p = this.path(podCgroup(this.root, q, uid));
      if (this.tree.exists(p)) await this.tree.remove(p);
    }
  }

  /** Pod cgroups of pods this kubelet no longer runs (a crash, a restart), removed; returns their uids. */
  async removeOrphans(isLive: (uid: string) => boolean): Promise<string[]> {
    if (!this.o.cgroupsPerQOS) return [];
    const gone: string[] = [];
    for (const q of QOS) {
      const parent = this.path(qosCgroup(this.root, q));
      for (const child of await this.tree.children(parent)) {
        const uid = podUidOf(child);
        if (!uid || isLive(uid)) continue;
        try {
          await this.tree.remove(`${parent.replace(/\/$/, '')}/${child}`);
          gone.push(uid);
        } catch (e) {
          this.log.warn(`cgroups: cannot remove the cgroup of orphaned pod ${uid} yet: ${(e as Error).message}`);
        }
      }
    }
    return gone;
  }
}
