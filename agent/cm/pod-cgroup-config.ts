// What goes into the QoS and pod cgroups, as upstream's ResourceConfigForPod
// and QoS container manager compute it, and each container's oom_score_adj.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { podQos } from '../../kube/pod-qos.js';
import {
  allLimit,
  podLevelSet,
  podResourceTotals,
  type PodSpecWithResources,
  podTotals,
} from '../../kube/pod-resources.js';
import { parseQuantity } from '../../kube/quantity.js';

export const MIN_SHARES = 2;
const MAX_SHARES = 262_144;
export const CPU_PERIOD = 100_000;
const MIN_QUOTA = 1000;

/** Cgroup settings in v1 terms; the v2 writer translates them. Undefined: left as it is (unlimited). */
export interface CgroupResources {
  cpuShares?: number;
  cpuQuota?: number;
  cpuPeriod?: number;
  memoryLimit?: number;
  pidsLimit?: number;
}

export function milliCpuToShares(milli: number): number {
  if (milli <= 0) return MIN_SHARES;
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((milli * 1024) / 1000)));
}

export function milliCpuToQuota(milli: number, period = CPU_PERIOD): number {
  if (milli <= 0) return 0;
  return Math.max(MIN_QUOTA, Math.floor((milli * period) / 1000));
}

/** cgroup v2's cpu.weight for v1 shares (upstream CpuSharesToCpuWeight). */
export const sharesToWeight = (shares: number): number => Math.floor(1 + ((shares - 2) * 9999) / 262_142);

/** The pod cgroup: shares from the summed requests; quota and memory limit when every container limits them (always for Guaranteed). */
export function podCgroupResources(pod: Pod, o: { podPidsLimit?: number } = {}): CgroupResources {
  const qos = podQos(pod);
  const pids = o.podPidsLimit && o.podPidsLimit > 0 ? { pidsLimit: o.podPidsLimit } : {};
  if (qos === 'BestEffort') return { cpuShares: MIN_SHARES, ...pids };
  // Pod-level resources, where set, decide (upstream ResourceConfigForPod with PodLevelResources).
  const spec = pod.spec as PodSpecWithResources | undefined;
  const req = podResourceTotals(spec, 'requests');
  const lim = podResourceTotals(spec, 'limits');
  const limited = (r: 'cpu' | 'memory'): boolean =>
    podLevelSet(spec, 'limits') ? spec?.resources?.limits?.[r] !== undefined : allLimit(pod.spec, r);
  const out: CgroupResources = { cpuShares: milliCpuToShares(req.cpu ?? 0), ...pids };
  if (qos === 'Guaranteed' || limited('cpu')) {
    out.cpuQuota = milliCpuToQuota(lim.cpu ?? 0);
    out.cpuPeriod = CPU_PERIOD;
  }
  if (qos === 'Guaranteed' || limited('memory')) out.memoryLimit = lim.memory;
  return out;
}

/** The Burstable QoS cgroup's shares: the CPU all Burstable pods request; BestEffort always gets the minimum. */
export function burstableShares(pods: Pod[]): number {
  const milli = pods
    .filter((p) => podQos(p) === 'Burstable')
    .reduce((s, p) => s + (podTotals(p.spec, 'requests').cpu ?? 0), 0);
  return milliCpuToShares(milli);
}

const GUARANTEED_OOM_SCORE_ADJ = -997;
const BESTEFFORT_OOM_SCORE_ADJ = 1000;

/** upstream GetContainerOOMScoreAdjust: node-critical and Guaranteed -997, BestEffort 1000, Burstable by its share of the node's memory (3..999). */
export function oomScoreAdj(pod: Pod, c: Container, memoryCapacity: number): number {
  if (pod.spec?.priorityClassName === 'system-node-critical') return GUARANTEED_OOM_SCORE_ADJ;
  const qos = podQos(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const req = c.resources?.requests?.memory ?? c.resources?.limits?.memory;
  const memoryRequest = req === undefined ? 0 : parseQuantity(req);
  // Go integer division.
  const adj = 1000 - Math.floor((1000 * memoryRequest) / memoryCapacity);
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
