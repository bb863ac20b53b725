import type { PodSpec, ResourceRequirements } from 'kubernetes-types/core/v1.js';

import { parseQuantity } from './quantity.js';

const QOS_RESOURCES = ['cpu', 'memory'] as const;

const amount = (q: unknown): number => {
  // Most containers set no resources: no parse (and no exception) for them.
  if (q === undefined || q === null) return 0;
  try {
    return parseQuantity(q as string);
  } catch {
    return 0;
  }
};

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** PodSpec with its pod-level resources (v1.32+; kubernetes-types stops at v1.30). */
type PodSpecWithResources = PodSpec & { resources?: ResourceRequirements };

/** One resource's shape: request ≠ limit is Burstable, both zero BestEffort, equal and non-zero Guaranteed. */
function resourceQos(r: ResourceRequirements, name: (typeof QOS_RESOURCES)[number]): QosClass {
  const lim = amount(r.limits?.[name]);
  // A request left out is the limit (the defaulting every pod gets before it runs).
  const req = r.requests?.[name] === undefined ? lim : amount(r.requests[name]);
  if (Math.abs(req - lim) > 1e-9) return 'Burstable';
  return req === 0 ? 'BestEffort' : 'Guaranteed';
}

/** The class one set of requirements alone gives; cpu and memory must agree, or it is Burstable. */
function requirementsQos(r: ResourceRequirements | undefined): QosClass {
  if (!r || (Object.keys(r.requests ?? {}).length === 0 && Object.keys(r.limits ?? {}).length === 0))
    return 'BestEffort';
  const [cpu, memory] = QOS_RESOURCES.map((n) => resourceQos(r, n));
  return cpu === memory ? cpu! : 'Burstable';
}

/** Pod-level requests or limits of a resource pod-level resources support (cpu, memory, hugepages). */
const podLevelSet = (r: ResourceRequirements | undefined): boolean =>
  [...Object.keys(r?.requests ?? {}), ...Object.keys(r?.limits ?? {})].some(
    (n) => n === 'cpu' || n === 'memory' || n.startsWith('hugepages-'),
  );

/**
 * status.qosClass as upstream's ComputePodQOS (v1.37): from the pod-level resources when set, otherwise each
 * container's class (init containers too), Burstable as soon as one is or two differ.
 */
export function qosClass(spec: PodSpecWithResources | undefined): QosClass {
  if (podLevelSet(spec?.resources)) return requirementsQos(spec!.resources);
  let pod: QosClass | undefined;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    const q = requirementsQos(c.resources);
    if (q === 'Burstable') return q;
    if (pod === undefined) pod = q;
    else if (pod !== q) return 'Burstable';
  }
  return pod ?? 'BestEffort';
}

/** The class a pod has: the one the apiserver stored (immutable once set), else computed (upstream's GetPodQOS). */
export const podQos = (pod: { spec?: PodSpec; status?: { qosClass?: string } }): QosClass =>
  (pod.status?.qosClass as QosClass | undefined) || qosClass(pod.spec);
