// Node-pressure eviction decisions as upstream's eviction manager makes
// them (pkg/kubelet/eviction): which thresholds are met (hard at once, soft
// after their grace period), which node conditions follow (held for the
// transition period), which resource to reclaim, how pods rank, and the
// Evicted message. Pure: observation and action are elsewhere.
import { formatBytes } from '../../kube/quantity.js';
import { type Threshold, thresholdValue } from '../cm/node-allocatable.js';

export type Signal =
  | 'memory.available'
  | 'allocatableMemory.available'
  | 'nodefs.available'
  | 'nodefs.inodesFree'
  | 'imagefs.available'
  | 'imagefs.inodesFree'
  | 'pid.available';
export type NodeCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
/** What eviction frees: the resource named in the Evicted message. */
export type Resource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export interface EvictionThreshold {
  signal: Signal;
  value: Threshold;
  /** 0 for a hard threshold. */
  gracePeriodMs: number;
}

export interface Observation {
  available: number;
  capacity: number;
}
export type Observations = Partial<Record<Signal, Observation>>;

export const SIGNAL_CONDITION: Record<Signal, NodeCondition> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

export const SIGNAL_RESOURCE: Record<Signal, Resource> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** Thresholds whose signal is below them now. */
export function thresholdsMet(thresholds: EvictionThreshold[], obs: Observations): EvictionThreshold[] {
  return thresholds.filter((t) => {
    const o = obs[t.signal];
    return o !== undefined && o.available < thresholdValue(t.value, o.capacity);
  });
}

/** When each met threshold was first seen met (kept across passes; a threshold no longer met is forgotten). */
export function firstObserved(
  met: EvictionThreshold[],
  prev: Map<EvictionThreshold, number>,
  now: number,
): Map<EvictionThreshold, number> {
  return new Map(met.map((t) => [t, prev.get(t) ?? now]));
}

/** Met thresholds that count: hard ones, and soft ones met for their whole grace period. */
export function thresholdsToActOn(first: Map<EvictionThreshold, number>, now: number): EvictionThreshold[] {
  return [...first].filter(([t, at]) => now - at >= t.gracePeriodMs).map(([t]) => t);
}

/**
 * Pressure conditions: a condition is True while one of its thresholds is met (soft ones even within their grace
 * period, as upstream) and for evictionPressureTransitionPeriod after it was last met.
 */
export function pressureConditions(
  met: EvictionThreshold[],
  lastSeen: Map<NodeCondition, number>,
  now: number,
  transitionMs: number,
): { conditions: Set<NodeCondition>; lastSeen: Map<NodeCondition, number> } {
  const seen = new Map(lastSeen);
  for (const t of met) seen.set(SIGNAL_CONDITION[t.signal], now);
  const conditions = new Set<NodeCondition>();
  for (const [c, at] of seen) {
    if (now - at < transitionMs || met.some((t) => SIGNAL_CONDITION[t.signal] === c)) conditions.add(c);
    else seen.delete(c);
  }
  return { conditions, lastSeen: seen };
}

/** The resource to reclaim for the thresholds acted on: memory first, then disk, then pids (upstream's signal order). */
export function resourceToReclaim(
  act: EvictionThreshold[],
): { threshold: EvictionThreshold; resource: Resource } | undefined {
  const order: Signal[] = [
    'memory.available',
    'allocatableMemory.available',
    'nodefs.available',
    'nodefs.inodesFree',
    'imagefs.available',
    'imagefs.inodesFree',
    'pid.available',
  ];
  const t = [...act].sort((a, b) => order.indexOf(a.signal) - order.indexOf(b.signal))[0];
  return t && { threshold: t, resource: SIGNAL_RESOURCE[t.signal] };
}

export interface ContainerUsage {
  name: string;
  /** Usage of the resource being reclaimed, and what the container requests of it. */
  usage: number;
  request: number;
}

export interface PodUsage {
  uid: string;
  priority: number;
  containers: ContainerUsage[];
  /** Pod-level usage beyond the containers' (emptyDir and logs for ephemeral-storage). */
  podUsage?: number;
  /** Critical pods (static, mirror, system-node-critical) are never evicted for node pressure. */
  critical?: boolean;
}

const total = (p: PodUsage): number => p.containers.reduce((s, c) => s + c.usage, 0) + (p.podUsage ?? 0);
const requested = (p: PodUsage): number => p.containers.reduce((s, c) => s + c.request, 0);

/**
 * Upstream's ranking for memory and ephemeral storage: pods using more than they request first, then lower
 * priority first, then by how far usage exceeds requests; for pids, by priority then by usage.
 */
export function rankPods(pods: PodUsage[], resource: Resource): PodUsage[] {
  const candidates = pods.filter((p) => !p.critical);
  const exceeds = (p: PodUsage): number => (total(p) > requested(p) ? 1 : 0);
  if (resource === 'pids') return [...candidates].sort((a, b) => a.priority - b.priority || total(b) - total(a));
  return [...candidates].sort(
    (a, b) => exceeds(b) - exceeds(a) || a.priority - b.priority || total(b) - requested(b) - (total(a) - requested(a)),
  );
}

/** Quantities as resource.Quantity prints them (BinarySI: the largest exact suffix). */
const show = (resource: Resource, n: number): string =>
  resource === 'memory' || resource === 'ephemeral-storage' ? formatBytes(Math.round(n)) : String(n);

/** The status message and event text of an eviction, in upstream's words. */
export function evictionMessage(
  resource: Resource,
  threshold: EvictionThreshold,
  obs: Observation | undefined,
  pod: PodUsage,
): string {
  let msg = `The node was low on resource: ${resource}. `;
  if (obs)
    msg += `Threshold quantity: ${'quantity' in threshold.value ? show(resource, threshold.value.quantity) : show(resource, thresholdValue(threshold.value, obs.capacity))}, available: ${show(resource, Math.max(0, obs.available))}. `;
  if (resource === 'memory' || resource === 'ephemeral-storage') {
    for (const c of pod.containers)
      if (c.usage > c.request)
        msg += `Container ${c.name} was using ${show(resource, c.usage)}, request is ${show(resource, c.request)}, has larger consumption of ${resource}. `;
  }
  return msg;
}
