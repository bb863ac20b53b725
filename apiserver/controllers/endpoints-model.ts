// What a Service's endpoints are, from its selector and the pods: the
// EndpointSlice contents (grouped by resolved ports, at most 100 endpoints a
// slice) and the legacy Endpoints subsets. Pure; the controllers write them.
import { familyOfText, type IPFamily } from '../../kube/cidr.js';
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
  return pods.filter(
    (p) =>
      p.metadata.namespace === svc.metadata.namespace &&
      p.status?.podIP &&
      !terminal(p) &&
      keys.every((k) => p.metadata.labels?.[k] === sel[k]),
  );
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
  addressType: AddressType;
  ports: Obj[];
  endpoints: Obj[];
}

/** An EndpointSlice addressType this controller writes: an IP family. */
export type AddressType = IPFamily;

/** A pod's IP of one family (status.podIPs, or status.podIP), or undefined. */
export function podIPOf(pod: Obj, family: AddressType): string | undefined {
  const ips = ((pod.status?.podIPs ?? []) as Obj[])
    .map((p) => String(p.ip ?? ''))
    .concat(pod.status?.podIP ? [String(pod.status.podIP)] : []);
  return ips.find((ip) => ip && familyOfText(ip) === family);
}

/** The address types a Service's slices have: one per IP family (upstream getAddressTypesForService). */
export const serviceAddressTypes = (svc: Obj): AddressType[] => {
  const fams = ((svc.spec?.ipFamilies ?? []) as string[]).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  return fams.length ? fams : ['IPv4'];
};

/** Endpoint conditions as upstream: serving = Ready (or publishNotReadyAddresses); ready also needs not terminating. */
function conditions(svc: Obj, pod: Obj): { ready: boolean; serving: boolean; terminating: boolean } {
  const serving = svc.spec?.publishNotReadyAddresses === true || podReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  return { ready: serving && !terminating, serving, terminating };
}

/**
 * The slices of one address type a Service should have: its pods with an IP of that family, grouped by their
 * resolved ports, then chunked. One empty slice if there are no endpoints.
 */
export function desiredSlices(
  svc: Obj,
  pods: Obj[],
  max = MAX_ENDPOINTS_PER_SLICE,
  addressType: AddressType = 'IPv4',
): SliceContent[] {
  const groups = new Map<string, { ports: Obj[]; endpoints: Obj[] }>();
  for (const pod of servicePods(svc, pods).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
    const ip = podIPOf(pod, addressType);
    if (!ip) continue;
    const ports: Obj[] = [];
    for (const sp of (svc.spec?.ports ?? []) as Obj[]) {
      const port = resolveTargetPort(sp, pod);
      if (port === undefined) continue;
      ports.push({
        name: sp.name ?? '',
        port,
        protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
      });
    }
    const key = JSON.stringify(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, endpoints: [] }));
    const hostname =
      pod.spec?.hostname && pod.spec?.subdomain === svc.metadata.name ? { hostname: pod.spec.hostname } : {};
    g.endpoints.push({
      addresses: [ip],
      conditions: conditions(svc, pod),
      ...hostname,
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    });
  }
  const out: SliceContent[] = [];
  for (const g of groups.values())
    for (let i = 0; i < g.endpoints.length; i += max)
      out.push({ addressType, ports: g.ports, endpoints: g.endpoints.slice(i, i + max) });
  return out.length ? out : [{ addressType, ports: [], endpoints: [] }];
}

/** Legacy Endpoints subsets (the Service's primary family): ready pods in addresses, not-ready (and not terminating) ones in notReadyAddresses. */
export function desiredSubsets(svc: Obj, pods: Obj[]): Obj[] {
  const bySig = new Map<string, { addresses: Obj[]; notReadyAddresses: Obj[]; ports: Obj[] }>();
  const family = serviceAddressTypes(svc)[0]!;
  const withIP = servicePods(svc, pods)
    .map((pod) => ({ pod, ip: podIPOf(pod, family) }))
    .filter((x): x is { pod: Obj; ip: string } => !!x.ip)
    .sort((a, b) => (a.ip < b.ip ? -1 : 1));
  for (const { pod, ip } of withIP) {
    const c = conditions(svc, pod);
    if (c.terminating && svc.spec?.publishNotReadyAddresses !== true) continue;
    const ports: Obj[] = [];
    for (const sp of (svc.spec?.ports ?? []) as Obj[]) {
      const port = resolveTargetPort(sp, pod);
      if (port !== undefined)
        ports.push({
          ...(sp.name ? { name: sp.name } : {}),
          port,
          protocol: sp.protocol ?? 'TCP',
          ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
        });
    }
    if (!ports.length) continue;
    const key = JSON.stringify(ports);
    let s = bySig.get(key);
    if (!s) bySig.set(key, (s = { addresses: [], notReadyAddresses: [], ports }));
    const addr = {
      ip,
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
    };
    (c.ready || svc.spec?.publishNotReadyAddresses === true ? s.addresses : s.notReadyAddresses).push(addr);
  }
  return [...bySig.values()].map((s) => ({
    ...(s.addresses.length ? { addresses: s.addresses } : {}),
    ...(s.notReadyAddresses.length ? { notReadyAddresses: s.notReadyAddresses } : {}),
    ports: s.ports,
  }));
}
