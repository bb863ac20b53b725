// What a Service's endpoints are, from its selector and the pods: the
// EndpointSlice contents (grouped by resolved ports, at most 100 endpoints a
// slice) and the legacy Endpoints subsets. Pure; the controllers write them.
import type { Obj } from '../storage/store.js';

export const MAX_ENDPOINTS_PER_SLICE = 100;

const terminal = (p: Obj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export function podReady(p: Obj): boolean {
  return ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pods a Service selects that can be endpoints: same namespace, labels match, an IP, not finished. */
export function servicePods(svc: Obj, pods: Obj[]): Obj[] {
  const sel = (svc.spec?.selector ?? {}) as Record<string, string>;
  const keys = Object.keys(sel);
  if (keys.length === 0) return [];
  return pods.filter((p) => p.metadata.namespace === svc.metadata.namespace && p.status?.podIP && !terminal(p) && keys.every((k) => p.metadata.labels?.[k] === sel[k]));
}

/** podutil.FindPort: a number, or a named container port of this pod. */
export function resolveTargetPort(sp: Obj, pod: Obj): number | undefined {
  const t = sp.targetPort ?? sp.port;
  if (typeof t === 'number') return t;
  if (/^\d+$/.test(String(t))) return Number(t);
  for (const c of (pod.spec?.containers ?? []) as Obj[]) {
    const p = ((c.ports ?? []) as Obj[]).find((x) => x.name === t && (x.protocol ?? 'TCP') === (sp.protocol ?? 'TCP'));
    if (p) return p.containerPort;
  }
  return undefined;
}

export interface SliceContent {
  ports: Obj[];
  endpoints: Obj[];
}

/** Endpoint conditions as upstream: serving = Ready (or publishNotReadyAddresses); ready also needs not terminating. */
function conditions(svc: Obj, pod: Obj): { ready: boolean; serving: boolean; terminating: boolean } {
  const serving = svc.spec?.publishNotReadyAddresses === true || podReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  return { ready: serving && !terminating, serving, terminating };
}

/** The slices a Service should have: pods grouped by their resolved ports, then chunked. One empty slice if there are no endpoints. */
export function desiredSlices(svc: Obj, pods: Obj[], max = MAX_ENDPOINTS_PER_SLICE): SliceContent[] {
  const groups = new Map<string, { ports: Obj[]; endpoints: Obj[] }>();
  for (const pod of servicePods(svc, pods).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
    const ports: Obj[] = [];
    for (const sp of (svc.spec?.ports ?? []) as Obj[]) {
      const port = resolveTargetPort(sp, pod);
      if (port === undefined) continue;
      ports.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    const key = JSON.stringify(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, endpoints: [] }));
    const hostname = pod.spec?.hostname && pod.spec?.subdomain === svc.metadata.name ? { hostname: pod.spec.hostname } : {};
    g.endpoints.push({
      addresses: [pod.status.podIP],
      conditions: conditions(svc, pod),
      ...hostname,
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    });
  }
  const out: SliceContent[] = [];
  for (const g of groups.values()) for (let i = 0; i < g.endpoints.length; i += max) out.push({ ports: g.ports, endpoints: g.endpoints.slice(i, i + max) });
  return out.length ? out : [{ ports: [], endpoints: [] }];
}

/** Legacy Endpoints subsets: ready pods in addresses, not-ready (and not terminating) ones in notReadyAddresses. */
export function desiredSubsets(svc: Obj, pods: Obj[]): Obj[] {
  const bySig = new Map<string, { addresses: Obj[]; notReadyAddresses: Obj[]; ports: Obj[] }>();
  for (const pod of servicePods(svc, pods).sort((a, b) => (a.status.podIP < b.status.podIP ? -1 : 1))) {
    const c = conditions(svc, pod);
    if (c.terminating && svc.spec?.publishNotReadyAddresses !== true) continue;
    const ports: Obj[] = [];
    for (const sp of (svc.spec?.ports ?? []) as Obj[]) {
      const port = resolveTargetPort(sp, pod);
      if (port !== undefined) ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    if (!ports.length) continue;
    const key = JSON.stringify(ports);
    let s = bySig.get(key);
    if (!s) bySig.set(key, (s = { addresses: [], notReadyAddresses: [], ports }));
    const addr = { ip: pod.status.podIP, ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}), targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid } };
    (c.ready || svc.spec?.publishNotReadyAddresses === true ? s.addresses : s.notReadyAddresses).push(addr);
  }
  return [...bySig.values()].map((s) => ({ ...(s.addresses.length ? { addresses: s.addresses } : {}), ...(s.notReadyAddresses.length ? { notReadyAddresses: s.notReadyAddresses } : {}), ports: s.ports }));
}
