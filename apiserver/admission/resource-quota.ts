// ResourceQuota (admission and usage, upstream's quota evaluators): what an
// object counts against a quota (pods and their compute requests and limits,
// services and their node ports, claims and their storage, object counts),
// what a namespace uses now, and the refusal of a create that would pass a
// quota's hard limit, with upstream's message.
import { qosClass } from '../../kube/pod-qos.js';
import { formatBytes, formatMilliCpu, milliValue, parseQuantity } from '../../kube/quantity.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

const COMPUTE = ['cpu', 'memory', 'ephemeral-storage'];
const terminal = (p: Obj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
/** CPU counts in millicores, everything else in units. */
const amount = (resource: string, v: unknown): number =>
  resource.endsWith('cpu') ? milliValue(String(v)) : parseQuantity(String(v));
export const formatAmount = (resource: string, n: number): string =>
  resource.endsWith('cpu') ? formatMilliCpu(n) : /memory|storage/.test(resource) ? formatBytes(n) : String(n);

/** A pod's requests or limits: its containers summed, or its largest init container if more, plus overhead. */
function podCompute(pod: Obj, kind: 'requests' | 'limits'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of (pod.spec?.containers ?? []) as Obj[])
    for (const [r, v] of Object.entries((c.resources?.[kind] ?? {}) as Record<string, string>))
      out[r] = (out[r] ?? 0) + amount(r, v);
  for (const c of (pod.spec?.initContainers ?? []) as Obj[])
    for (const [r, v] of Object.entries((c.resources?.[kind] ?? {}) as Record<string, string>))
      out[r] = Math.max(out[r] ?? 0, amount(r, v));
  for (const [r, v] of Object.entries((pod.spec?.overhead ?? {}) as Record<string, string>))
    if (out[r] !== undefined) out[r] += amount(r, v);
  return out;
}

/** The usage one object adds, by quota resource name (count/<resource>[.<group>] for every kind). */
export function usageOf(resource: string, group: string, o: Obj): Record<string, number> {
  const out: Record<string, number> = { [`count/${resource}${group ? `.${group}` : ''}`]: 1 };
  if (resource === 'pods') {
    if (terminal(o)) return {};
    out.pods = 1;
    const req = podCompute(o, 'requests');
    const lim = podCompute(o, 'limits');
    for (const r of COMPUTE) {
      if (req[r] !== undefined) out[`requests.${r}`] = req[r];
      if (lim[r] !== undefined) out[`limits.${r}`] = lim[r];
    }
    if (req.cpu !== undefined) out.cpu = req.cpu;
    if (req.memory !== undefined) out.memory = req.memory;
    if (req['ephemeral-storage'] !== undefined) out['ephemeral-storage'] = req['ephemeral-storage'];
    // Extended resources and huge pages are quoted by their requests only.
    for (const [r, n] of Object.entries(req))
      if (r.includes('/') || r.startsWith('hugepages-')) out[`requests.${r}`] = n;
  } else if (resource === 'services') {
    out.services = 1;
    const type = o.spec?.type ?? 'ClusterIP';
    if (type === 'NodePort' || type === 'LoadBalancer')
      out['services.nodeports'] = ((o.spec?.ports ?? []) as Obj[]).length;
    if (type === 'LoadBalancer') out['services.loadbalancers'] = 1;
  } else if (resource === 'persistentvolumeclaims') {
    out.persistentvolumeclaims = 1;
    const storage = amount('storage', o.spec?.resources?.requests?.storage ?? 0);
    out['requests.storage'] = storage;
    const cls = o.spec?.storageClassName;
    if (cls) {
      out[`${cls}.storageclass.storage.k8s.io/requests.storage`] = storage;
      out[`${cls}.storageclass.storage.k8s.io/persistentvolumeclaims`] = 1;
    }
  } else if (['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'].includes(resource) && !group)
    out[resource] = 1;
  return out;
}

/** Whether a pod is in one quota scope (upstream's scope evaluators). */
function podInScope(pod: Obj, scope: string, operator: string, values: string[]): boolean {
  const spec = (pod.spec ?? {}) as Obj;
  let inScope: boolean;
  switch (scope) {
    case 'Terminating':
      return typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
    case 'NotTerminating':
      return !(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0);
    case 'BestEffort':
      return qosClass(pod.spec) === 'BestEffort';
    case 'NotBestEffort':
      return qosClass(pod.spec) !== 'BestEffort';
    case 'PriorityClass': {
      const cls = spec.priorityClassName as string | undefined;
      if (operator === 'Exists') return cls !== undefined && cls !== '';
      if (operator === 'DoesNotExist') return !cls;
      inScope = values.includes(cls ?? '');
      return operator === 'NotIn' ? !inScope : inScope;
    }
    case 'CrossNamespacePodAffinity': {
      const terms = [
        ...((spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]),
        ...((spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]),
        ...((spec.affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]).map(
          (w) => w.podAffinityTerm as Obj,
        ),
        ...((spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) as Obj[]).map(
          (w) => w.podAffinityTerm as Obj,
        ),
      ];
      return terms.some((t) => t?.namespaceSelector !== undefined || ((t?.namespaces ?? []) as string[]).length > 0);
    }
    default:
      return false;
  }
}

/**
 * Whether a quota counts an object: an unscoped quota counts everything; a quota with `scopes` or a
 * `scopeSelector` counts only pods in every one of its scopes.
 */
export function quotaCounts(q: Obj, resource: string, o: Obj): boolean {
  const scopes = (q.spec?.scopes ?? []) as string[];
  const selected = (q.spec?.scopeSelector?.matchExpressions ?? []) as Obj[];
  if (!scopes.length && !selected.length) return true;
  if (resource !== 'pods') return false;
  return (
    scopes.every((sc) => podInScope(o, sc, 'Exists', [])) &&
    selected.every((e) => podInScope(o, String(e.scopeName), String(e.operator), (e.values ?? []) as string[]))
  );
}

/** Every tracked resource's use in a namespace, from its objects of each kind (resource -> objects). */
export function namespaceUsage(
  hard: Record<string, unknown>,
  objects: { resource: string; group: string; items: Obj[] }[],
  quota?: Obj,
): Record<string, string> {
  const used: Record<string, number> = Object.fromEntries(Object.keys(hard).map((k) => [k, 0]));
  for (const { resource, group, items } of objects) {
    for (const o of items) {
      if (quota && !quotaCounts(quota, resource, o)) continue;
      for (const [k, n] of Object.entries(usageOf(resource, group, o))) if (k in used) used[k]! += n;
    }
  }
  return Object.fromEntries(Object.entries(used).map(([k, n]) => [k, formatAmount(k, n)]));
}

/** Which kinds a quota's hard limits need counted (a count/ name, or the resources behind the standard names). */
export function kindsTracked(hard: Record<string, unknown>): { resource: string; group: string }[] {
  const out = new Map<string, { resource: string; group: string }>();
  const add = (resource: string, group = ''): void => void out.set(`${group}/${resource}`, { resource, group });
  for (const k of Object.keys(hard)) {
    const count = /^count\/([^.]+)(?:\.(.+))?$/.exec(k);
    if (count) add(count[1]!, count[2] ?? '');
    else if (
      k === 'pods' ||
      k === 'cpu' ||
      k === 'memory' ||
      k === 'ephemeral-storage' ||
      /^(requests|limits)\.(cpu|memory|ephemeral-storage)$/.test(k) ||
      /^requests\.([^/]+\/.+|hugepages-.+)$/.test(k)
    )
      add('pods');
    else if (k.startsWith('services')) add('services');
    else if (k === 'persistentvolumeclaims' || k.endsWith('requests.storage') || k.endsWith('/persistentvolumeclaims'))
      add('persistentvolumeclaims');
    else if (['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'].includes(k)) add(k);
  }
  return [...out.values()];
}

/**
 * Admission of a create: refused (403) when it would take any quota of the
 * namespace past its hard limit, or when a quota limits a compute resource
 * the pod does not state.
 */
export function admitQuota(
  resource: string,
  group: string,
  o: Obj,
  quotas: Obj[],
  usedBy: (q: Obj) => Record<string, string>,
): void {
  const delta = usageOf(resource, group, o);
  for (const q of quotas) {
    const hard = (q.spec?.hard ?? {}) as Record<string, string>;
    if (!kindsTracked(hard).some((t) => t.resource === resource && t.group === group)) continue;
    if (!quotaCounts(q, resource, o)) continue;
    const touched = Object.keys(delta).filter((k) => k in hard);
    const name = q.metadata.name as string;
    if (resource === 'pods') {
      const missing = Object.keys(hard).filter(
        (k) => /^(requests|limits)\.(cpu|memory)$/.test(k) && delta[k] === undefined,
      );
      if (missing.length)
        throw errors.forbiddenObject(
          resource,
          group,
          o.metadata.name,
          `failed quota: ${name}: must specify ${missing.sort().join(',')}`,
        );
    }
    const used = usedBy(q);
    const over = touched.filter((k) => amount(k, used[k] ?? 0) + delta[k]! > amount(k, hard[k]));
    if (!over.length) continue;
    const list = (f: (k: string) => string): string =>
      over
        .sort()
        .map((k) => `${k}=${f(k)}`)
        .join(',');
    throw errors.forbiddenObject(
      resource,
      group,
      o.metadata.name,
      `exceeded quota: ${name}, requested: ${list((k) => formatAmount(k, delta[k]!))}, used: ${list((k) => formatAmount(k, amount(k, used[k] ?? 0)))}, limited: ${list((k) => String(hard[k]))}`,
    );
  }
}
