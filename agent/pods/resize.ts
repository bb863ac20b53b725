// In-place resize (upstream 1.33, KEP 1287), the kubelet's pure half: what
// the runtime must change for a running container to hold its allocated
// cpu and memory, whether the resize policy asks for a restart instead,
// whether a resize fits the node, and what status reports.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { canonicalJson } from '../../kube/hash.js';
import { formatBytes, formatMilliCpu, milliValue, parseQuantity } from '../../kube/quantity.js';
import { linuxResources } from './cri-config.js';
import type { ContainerInfo } from './runtime-state.js';

/** What the runtime reports a container runs with (CRI ContainerStatus.resources.linux). */
export interface ActualResources {
  cpuShares: number;
  cpuQuota: number;
  cpuPeriod: number;
  memoryLimit: number;
}

export type Requirements = Container['resources'];

/** cpu and memory, each when what the runtime holds differs from what the container's resources ask for. */
export function resizeChanges(c: Container, actual: ActualResources | undefined): ('cpu' | 'memory')[] {
  if (!actual) return []; // a runtime that does not report resources cannot be compared
  const want = linuxResources(c);
  const out: ('cpu' | 'memory')[] = [];
  const quota = Number(want.cpu_quota);
  if (
    Number(want.cpu_shares) !== actual.cpuShares ||
    quota !== (actual.cpuQuota > 0 ? actual.cpuQuota : 0) ||
    (quota > 0 && Number(want.cpu_period) !== actual.cpuPeriod)
  )
    out.push('cpu');
  if (Number(want.memory_limit_in_bytes) !== actual.memoryLimit) out.push('memory');
  return out;
}

/** RestartContainer for any changed resource wins over NotRequired (upstream's resize policy). */
export function resizeNeedsRestart(c: Container, changed: string[]): boolean {
  return (c.resizePolicy ?? []).some((p) => changed.includes(p.resourceName) && p.restartPolicy === 'RestartContainer');
}

/** A memory limit going down (or a limit appearing) is applied before increases, as upstream orders container updates. */
export function isDecrease(c: Container, actual: ActualResources | undefined): boolean {
  const want = Number(linuxResources(c).memory_limit_in_bytes);
  return actual !== undefined && want > 0 && (actual.memoryLimit === 0 || want < actual.memoryLimit);
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

/** Resources by container name (regular containers and sidecars: what a resize may change). */
export function resizableResources(pod: Pod): Map<string, Requirements> {
  const out = new Map<string, Requirements>();
  for (const c of [
    ...(pod.spec?.initContainers ?? []).filter((x) => x.restartPolicy === 'Always'),
    ...(pod.spec?.containers ?? []),
  ])
    out.set(c.name, c.resources);
  return out;
}

const canon = (v: unknown): string => canonicalJson(v ?? {});
export const sameResources = (a: Map<string, Requirements>, b: Map<string, Requirements>): boolean =>
  a.size === b.size && [...a].every(([k, v]) => b.has(k) && canon(v) === canon(b.get(k)));

/** The pod as it runs: its containers' resources are the allocated ones (a resize not admitted yet is not applied). */
export function withAllocation(pod: Pod, allocation: Map<string, Requirements>): Pod {
  const swap = (c: Container): Container =>
    allocation.has(c.name) && canon(allocation.get(c.name)) !== canon(c.resources)
      ? { ...c, resources: allocation.get(c.name) }
      : c;
  return {
    ...pod,
    spec: {
      ...pod.spec!,
      containers: (pod.spec?.containers ?? []).map(swap),
      ...(pod.spec?.initContainers ? { initContainers: pod.spec.initContainers.map(swap) } : {}),
    },
  };
}

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
    if (requests.cpu !== undefined && a.cpuShares > 0)
      requests.cpu = formatMilliCpu(Math.ceil((a.cpuShares * 1000) / 1024));
    if (limits.cpu !== undefined && a.cpuQuota > 0 && a.cpuPeriod > 0)
      limits.cpu = formatMilliCpu(Math.floor((a.cpuQuota * 1000) / a.cpuPeriod));
    if (limits.memory !== undefined && a.memoryLimit > 0) limits.memory = formatBytes(a.memoryLimit);
  }
  return { ...(Object.keys(limits).length ? { limits } : {}), ...(Object.keys(requests).length ? { requests } : {}) };
}
