// In-place resize (upstream 1.33, KEP 1287), the kubelet's pure half: what
// the runtime must change for a running container to hold its allocated
// cpu and memory, whether the resize policy asks for a restart instead,
// whether a resize fits the node, and what status reports.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { canonicalJson } from '../../kube/hash.js';
import { formatBytes, formatMilliCpu, milliValue, parseQuantity } from '../../kube/quantity.js';
import { linuxResources, memoryRequestBytes, type PodResources, podResourcesOf } from './cri-config.js';
import type { ContainerInfo } from './runtime-state.js';

/** What the runtime reports a container runs with (CRI ContainerStatus.resources.linux). */
export interface ActualResources {
  cpuShares: number;
  cpuQuota: number;
  cpuPeriod: number;
  memoryLimit: number;
  /** The memory request it was created with or last resized to (no cgroup value shows it); unknown for old containers. */
  memoryRequest?: number;
}

export type Requirements = Container['resources'];

/** cpu and memory, each when what the runtime holds differs from what the container's resources ask for. */
export function resizeChanges(
  c: Container,
  actual: ActualResources | undefined,
  podResources?: PodResources,
): ('cpu' | 'memory')[] {
  if (!actual) return []; // a runtime that does not report resources cannot be compared
  const want = linuxResources(c, podResources);
  const out: ('cpu' | 'memory')[] = [];
  const quota = Number(want.cpu_quota);
  if (
    Number(want.cpu_shares) !== actual.cpuShares ||
    quota !== (actual.cpuQuota > 0 ? actual.cpuQuota : 0) ||
    (quota > 0 && Number(want.cpu_period) !== actual.cpuPeriod)
  )
    out.push('cpu');
  if (
    Number(want.memory_limit_in_bytes) !== actual.memoryLimit ||
    (actual.memoryRequest !== undefined && memoryRequestBytes(c) !== actual.memoryRequest)
  )
    out.push('memory');
  return out;
}

/** RestartContainer for any changed resource wins over NotRequired (upstream's resize policy). */
export function resizeNeedsRestart(c: Container, changed: string[]): boolean {
  return (c.resizePolicy ?? []).some((p) => changed.includes(p.resourceName) && p.restartPolicy === 'RestartContainer');
}

/** A memory limit going down (or a limit appearing) is applied before increases, as upstream orders container updates. */
export function isDecrease(c: Container, actual: ActualResources | undefined, podResources?: PodResources): boolean {
  const want = Number(linuxResources(c, podResources).memory_limit_in_bytes);
  return actual !== undefined && want > 0 && (actual.memoryLimit === 0 || want < actual.memoryLimit);
}

/** Whether a resize lowers the pod-level memory limit the pod cgroup holds. */
export function isPodMemoryDecrease(want: PodResources, actuated: PodResources): boolean {
  const to = want?.limits?.memory;
  const from = actuated?.limits?.memory;
  return to !== undefined && from !== undefined && parseQuantity(to) < parseQuantity(from);
}

/** upstream's refusal of a pod memory limit at or below what the pod uses now (usage unknown: no refusal). */
export function podMemoryDecreaseError(want: PodResources, usage: number | undefined): string | undefined {
  const to = want?.limits?.memory;
  if (to === undefined || usage === undefined || usage < parseQuantity(to)) return undefined;
  return `cannot decrease memory limits: attempting to set pod memory limit (${parseQuantity(to)}) below current usage (${usage})`;
}

/** The pod's cpu (millicores) and memory (bytes) requests: regular containers and sidecars summed, or the largest regular init container if more (upstream GetResourceRequest). */
export function podRequests(pod: Pod): { cpu: number; memory: number } {
  const req = (c: Container, k: 'cpu' | 'memory'): number => {
    const q = (c.resources?.requests as Record<string, string> | undefined)?.[k];
    if (q === undefined) return 0;
    try {
      return k === 'cpu' ? milliValue(q) : parseQuantity(q);
    } catch {
      return 0;
    }
  };
  const out = { cpu: 0, memory: 0 };
  const init = pod.spec?.initContainers ?? [];
  for (const k of ['cpu', 'memory'] as const) {
    let running = 0;
    let peak = 0;
    for (const c of init) {
      if (c.restartPolicy === 'Always') running += req(c, k);
      else peak = Math.max(peak, running + req(c, k));
    }
    for (const c of pod.spec?.containers ?? []) running += req(c, k);
    out[k] = Math.max(running, peak);
    // Pod-level requests, where set, are the pod's (upstream PodRequests with PodLevelResources).
    const podLevel = podResourcesOf(pod)?.requests?.[k];
    if (podLevel !== undefined) out[k] = k === 'cpu' ? milliValue(podLevel) : parseQuantity(podLevel);
    const overhead = (pod.spec?.overhead as Record<string, string> | undefined)?.[k];
    if (overhead !== undefined) out[k] += k === 'cpu' ? milliValue(overhead) : parseQuantity(overhead);
  }
  return out;
}

export interface ResizePending {
  reason: 'Infeasible' | 'Deferred';
  message: string;
}

/** upstream canResizePod: more than the node has at all is Infeasible; more than is free beside the other pods is Deferred. */
export function resizeFit(
  want: { cpu: number; memory: number },
  others: { cpu: number; memory: number },
  allocatable: { cpu: number; memory: number },
): ResizePending | undefined {
  if (want.memory > allocatable.memory)
    return {
      reason: 'Infeasible',
      message: `Node didn't have enough capacity: memory, requested: ${want.memory}, capacity: ${allocatable.memory}`,
    };
  if (want.cpu > allocatable.cpu)
    return {
      reason: 'Infeasible',
      message: `Node didn't have enough capacity: cpu, requested: ${want.cpu}, capacity: ${allocatable.cpu}`,
    };
  if (others.cpu + want.cpu > allocatable.cpu)
    return {
      reason: 'Deferred',
      message: `Node didn't have enough resource: cpu, requested: ${want.cpu}, used: ${others.cpu}, capacity: ${allocatable.cpu}`,
    };
  if (others.memory + want.memory > allocatable.memory)
    return {
      reason: 'Deferred',
      message: `Node didn't have enough resource: memory, requested: ${want.memory}, used: ${others.memory}, capacity: ${allocatable.memory}`,
    };
  return undefined;
}

/** The allocation's key for pod-level resources (no container has an empty name). */
export const POD_LEVEL = '';

/**
 * Resources by container name (every init and regular container: what a resize may change; a non-sidecar init
 * container's resize matters while it runs, GA in v1.37), and the pod-level ones.
 */
export function resizableResources(pod: Pod): Map<string, Requirements> {
  const out = new Map<string, Requirements>();
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) out.set(c.name, c.resources);
  const podLevel = podResourcesOf(pod);
  if (podLevel) out.set(POD_LEVEL, podLevel);
  return out;
}

const canon = (v: unknown): string => canonicalJson(v ?? {});
export const sameResources = (a: Map<string, Requirements>, b: Map<string, Requirements>): boolean =>
  a.size === b.size && [...a].every(([k, v]) => b.has(k) && canon(v) === canon(b.get(k)));

/** The pod as it runs: its containers' and pod-level resources are the allocated ones (a resize not admitted yet is not applied). */
export function withAllocation(pod: Pod, allocation: Map<string, Requirements>): Pod {
  const swap = (c: Container): Container =>
    allocation.has(c.name) && canon(allocation.get(c.name)) !== canon(c.resources)
      ? { ...c, resources: allocation.get(c.name) }
      : c;
  const podLevel = allocation.get(POD_LEVEL);
  return {
    ...pod,
    spec: {
      ...pod.spec!,
      containers: (pod.spec?.containers ?? []).map(swap),
      ...(pod.spec?.initContainers ? { initContainers: pod.spec.initContainers.map(swap) } : {}),
      ...(podLevel ? { resources: podLevel } : {}),
    } as Pod['spec'],
  };
}

/** upstream cm.MinShares and cm.MinMilliCPULimit (MinQuotaPeriod 1000 µs of a 100 ms period). */
const MIN_SHARES = 2;
const MIN_MILLI_CPU_LIMIT = 10;

/**
 * containerStatuses[].resources as upstream: the allocated resources, with what the runtime reports in place of the
 * cpu request (from shares), cpu limit (from quota) and memory limit for a running container.
 */
export function statusResources(allocated: Container, cur: ContainerInfo | undefined): Record<string, unknown> {
  const res = allocated.resources ?? {};
  const requests = { ...((res.requests ?? {}) as Record<string, string>) };
  const limits = { ...((res.limits ?? {}) as Record<string, string>) };
  const a = cur?.state === 'running' ? cur.resources : undefined;
  if (a) {
    // At or below the smallest value the cgroup can hold (2 shares, a 1 ms quota) on both sides, the allocated value
    // stays: a resize between equivalents (2m to 1m) shows what was asked.
    const milli = (q: string): number => {
      try {
        return milliValue(q);
      } catch {
        return 0;
      }
    };
    if (requests.cpu !== undefined && a.cpuShares > 0) {
      const actual = Math.ceil((a.cpuShares * 1000) / 1024);
      if (actual > MIN_SHARES || milli(requests.cpu) > MIN_SHARES) requests.cpu = formatMilliCpu(actual);
    }
    if (limits.cpu !== undefined && a.cpuQuota > 0 && a.cpuPeriod > 0) {
      const actual = Math.floor((a.cpuQuota * 1000) / a.cpuPeriod);
      if (actual > MIN_MILLI_CPU_LIMIT || milli(limits.cpu) > MIN_MILLI_CPU_LIMIT) limits.cpu = formatMilliCpu(actual);
    }
    if (limits.memory !== undefined && a.memoryLimit > 0) limits.memory = formatBytes(a.memoryLimit);
  }
  return { ...(Object.keys(limits).length ? { limits } : {}), ...(Object.keys(requests).length ? { requests } : {}) };
}
