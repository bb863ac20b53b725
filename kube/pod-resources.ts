// A pod's total requests or limits as upstream's resourcehelper computes them:
// regular containers and restartable init containers (sidecars) run together,
// each other init container runs alone beside the sidecars started before it,
// and the pod's overhead is added. CPU in millicores, the rest in units.
import type { Container, PodSpec } from 'kubernetes-types/core/v1.js';

import { formatBytes, formatMilliCpu, milliValue, parseQuantity } from './quantity.js';

type Kind = 'requests' | 'limits';
type Totals = Record<string, number>;

const amount = (name: string, q: string | number): number => (name === 'cpu' ? milliValue(q) : parseQuantity(q));

function of(c: Container, kind: Kind): Totals {
  const out: Totals = {};
  // A request left out is the limit, as the apiserver defaults it.
  const src = {
    ...(kind === 'requests' ? (c.resources?.limits ?? {}) : {}),
    ...((c.resources?.[kind] ?? {}) as Record<string, string>),
  } as Record<string, string>;
  for (const [k, v] of Object.entries(src)) out[k] = amount(k, v);
  return out;
}

const add = (a: Totals, b: Totals): Totals => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};
const max = (a: Totals, b: Totals): Totals => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
};

export function podTotals(spec: PodSpec | undefined, kind: Kind, o: { overhead?: boolean } = {}): Totals {
  let total: Totals = {};
  for (const c of spec?.containers ?? []) total = add(total, of(c, kind));
  let sidecars: Totals = {};
  let initMax: Totals = {};
  for (const c of spec?.initContainers ?? []) {
    const r = of(c, kind);
    if (c.restartPolicy === 'Always') {
      sidecars = add(sidecars, r);
      initMax = max(initMax, sidecars);
    } else initMax = max(initMax, add(sidecars, r));
  }
  total = max(add(total, sidecars), initMax);
  if (o.overhead !== false)
    for (const [k, v] of Object.entries((spec?.overhead ?? {}) as Record<string, string>))
      total[k] = (total[k] ?? 0) + amount(k, v);
  return total;
}

/** Whether every container that runs alongside the others (regular and sidecar) limits `resource`. */
export function allLimit(spec: PodSpec | undefined, resource: string): boolean {
  const cs = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  return (
    cs.length > 0 &&
    cs.every((c) => (c.resources?.limits as Record<string, string> | undefined)?.[resource] !== undefined)
  );
}

/** Resources pod-level requirements may set (upstream's IsSupportedPodLevelResource). */
const podLevelResource = (name: string): boolean =>
  name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');

type ResourceList = Record<string, string>;
export type PodSpecWithResources = PodSpec & { resources?: { requests?: ResourceList; limits?: ResourceList } };

const format = (totals: Totals): ResourceList =>
  Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, k === 'cpu' ? formatMilliCpu(v) : formatBytes(v)]));

/** Whether the pod sets pod-level `kind` (requests or limits) for a resource pod-level resources support. */
export const podLevelSet = (spec: PodSpecWithResources | undefined, kind: Kind): boolean =>
  Object.keys(spec?.resources?.[kind] ?? {}).some(podLevelResource);

/**
 * The pod's requests or limits as upstream's PodRequests and PodLimits, in millicores and units: its pod-level values
 * where it sets them for a resource pod-level resources support, the containers' totals otherwise, and the overhead.
 */
export function podResourceTotals(spec: PodSpecWithResources | undefined, kind: Kind): Totals {
  const out = podTotals(spec, kind, { overhead: false });
  for (const [k, v] of Object.entries(spec?.resources?.[kind] ?? {})) if (podLevelResource(k)) out[k] = amount(k, v);
  for (const [k, v] of Object.entries((spec?.overhead ?? {}) as ResourceList)) out[k] = (out[k] ?? 0) + amount(k, v);
  return out;
}

/** The same as quantities (cpu in millicores or cores, the rest in binary units). */
export function effectivePodResources(spec: PodSpecWithResources | undefined, kind: Kind): ResourceList {
  const out = format(podResourceTotals(spec, kind));
  // Pod-level values are reported as the pod wrote them (without overhead, the apiserver's own strings).
  if (!spec?.overhead)
    for (const [k, v] of Object.entries(spec?.resources?.[kind] ?? {})) if (podLevelResource(k)) out[k] = v;
  return out;
}

/**
 * The pod-level status.resources and status.allocatedResources a v1.36+ kubelet reports: the pod's effective
 * requests and limits, and its requests as allocated.
 */
export function podLevelStatusResources(spec: PodSpecWithResources | undefined): {
  resources: { requests?: ResourceList; limits?: ResourceList };
  allocatedResources?: ResourceList;
} {
  const requests = effectivePodResources(spec, 'requests');
  const limits = effectivePodResources(spec, 'limits');
  const some = (l: ResourceList): boolean => Object.keys(l).length > 0;
  return {
    resources: { ...(some(limits) ? { limits } : {}), ...(some(requests) ? { requests } : {}) },
    ...(some(requests) ? { allocatedResources: requests } : {}),
  };
}
