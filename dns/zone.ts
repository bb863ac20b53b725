// What the cluster DNS knows: Services, the endpoints of their EndpointSlices
// and the Namespaces, kept in maps an informer event updates in O(that object)
// so a query never scans the cluster. Only the fields DNS answers from are kept.
import net from 'node:net';

import type { KObj } from '../kube/client.js';
import { checkDns1123Label } from '../kube/names.js';

export interface ServicePort {
  name: string;
  protocol: string; // lower case: tcp, udp, sctp
  port: number;
}

export interface ServiceInfo {
  ns: string;
  name: string;
  clusterIPs: string[];
  headless: boolean;
  externalName?: string;
  ports: ServicePort[];
  publishNotReady: boolean;
}

export interface Endpoint {
  ip: string;
  hostname?: string;
  ready: boolean;
}

interface SliceInfo {
  svcKey: string;
  endpoints: Endpoint[];
  ports: ServicePort[];
}

/** An endpoint's own name under its Service: its hostname, else its IP with dashes (CoreDNS's default). */
export const endpointLabel = (e: Endpoint): string => e.hostname ?? dashedIp(e.ip);

export function dashedIp(ip: string): string {
  return net.isIPv6(ip) ? expandIPv6(ip).replace(/:/g, '-') : ip.replace(/\./g, '-');
}

/** The 8 groups of an IPv6 address, each without leading zeros, joined by ':' (no '::'). */
export function expandIPv6(ip: string): string {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => (parseInt(g, 16) || 0).toString(16)).join(':');
}

/** One spelling per address, for the reverse maps. */
const ipKey = (ip: string): string => (net.isIPv6(ip) ? expandIPv6(ip) : ip);

const keyOf = (ns: string, name: string): string => `${ns}/${name}`;

function portsOf(list: unknown): ServicePort[] {
  const out: ServicePort[] = [];
  for (const p of (Array.isArray(list) ? list : []) as { name?: string; protocol?: string; port?: number }[]) {
    if (typeof p?.port !== 'number') continue;
    out.push({ name: (p.name ?? '').toLowerCase(), protocol: (p.protocol ?? 'TCP').toLowerCase(), port: p.port });
  }
  return out;
}

export function serviceInfo(o: KObj): ServiceInfo | undefined {
  const ns = o.metadata?.namespace ?? '';
  const name = o.metadata?.name ?? '';
  // Only names that are DNS labels can be asked for; anything else is skipped, not a crash.
  if (checkDns1123Label(name) || checkDns1123Label(ns)) return undefined;
  const spec = o.spec ?? {};
  const ips = ((spec.clusterIPs as string[] | undefined) ?? (spec.clusterIP ? [spec.clusterIP] : [])).filter((ip) =>
    net.isIP(ip),
  );
  const externalName =
    spec.type === 'ExternalName' && typeof spec.externalName === 'string'
      ? spec.externalName.replace(/\.$/, '').toLowerCase()
      : undefined;
  return {
    ns,
    name,
    clusterIPs: ips,
    headless: !externalName && ips.length === 0,
    externalName,
    ports: portsOf(spec.ports),
    publishNotReady: spec.publishNotReadyAddresses === true,
  };
}

function sliceInfo(o: KObj): { svcKey: string; info: SliceInfo } | undefined {
  const ns = o.metadata?.namespace ?? '';
  const svc = o.metadata?.labels?.['kubernetes.io/service-name'];
  if (!svc || (o.addressType !== 'IPv4' && o.addressType !== 'IPv6')) return undefined;
  const endpoints: Endpoint[] = [];
  for (const e of (Array.isArray(o.endpoints) ? o.endpoints : []) as {
    addresses?: string[];
    hostname?: string;
    conditions?: { ready?: boolean };
  }[]) {
    const hostname = e.hostname && !checkDns1123Label(e.hostname) ? e.hostname.toLowerCase() : undefined;
    // As EndpointSlice consumers must: an unset ready condition means ready.
    const ready = e.conditions?.ready !== false;
    for (const ip of e.addresses ?? []) if (net.isIP(ip)) endpoints.push({ ip, hostname, ready });
  }
  return { svcKey: keyOf(ns, svc), info: { svcKey: keyOf(ns, svc), endpoints, ports: portsOf(o.ports) } };
}

export class ZoneData {
  private readonly services = new Map<string, ServiceInfo>();
  private readonly slices = new Map<string, SliceInfo>();
  private readonly slicesBySvc = new Map<string, Set<string>>();
  private readonly byClusterIP = new Map<string, string>();
  private readonly byEndpointIP = new Map<string, Set<string>>();
  private readonly namespaces = new Set<string>();
  private readonly servicesPerNs = new Map<string, number>();
  /** Unix seconds of the last change: the SOA serial, as CoreDNS. */
  modified = Math.floor(Date.now() / 1000);

  private touch(): void {
    this.modified = Math.floor(Date.now() / 1000);
  }

  get serviceCount(): number {
    return this.services.size;
  }

  setService(o: KObj): void {
    const key = keyOf(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    this.deleteServiceKey(key);
    const info = serviceInfo(o);
    if (!info) return;
    this.services.set(key, info);
    this.servicesPerNs.set(info.ns, (this.servicesPerNs.get(info.ns) ?? 0) + 1);
    for (const ip of info.clusterIPs) this.byClusterIP.set(ipKey(ip), key);
    this.touch();
  }

  deleteService(o: KObj): void {
    this.deleteServiceKey(keyOf(o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
    this.touch();
  }

  private deleteServiceKey(key: string): void {
    const old = this.services.get(key);
    if (!old) return;
    for (const ip of old.clusterIPs) if (this.byClusterIP.get(ipKey(ip)) === key) this.byClusterIP.delete(ipKey(ip));
    this.services.delete(key);
    const n = (this.servicesPerNs.get(old.ns) ?? 1) - 1;
    if (n > 0) this.servicesPerNs.set(old.ns, n);
    else this.servicesPerNs.delete(old.ns);
  }

  setSlice(o: KObj): void {
    const key = keyOf(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    this.deleteSliceKey(key);
    const s = sliceInfo(o);
    if (!s) return;
    this.slices.set(key, s.info);
    let set = this.slicesBySvc.get(s.svcKey);
    if (!set) this.slicesBySvc.set(s.svcKey, (set = new Set()));
    set.add(key);
    for (const e of s.info.endpoints) {
      let bys = this.byEndpointIP.get(ipKey(e.ip));
      if (!bys) this.byEndpointIP.set(ipKey(e.ip), (bys = new Set()));
      bys.add(key);
    }
    this.touch();
  }

  deleteSlice(o: KObj): void {
    this.deleteSliceKey(keyOf(o.metadata?.namespace ?? '', o.metadata?.name ?? ''));
    this.touch();
  }

  private deleteSliceKey(key: string): void {
    const old = this.slices.get(key);
    if (!old) return;
    this.slices.delete(key);
    const set = this.slicesBySvc.get(old.svcKey);
    set?.delete(key);
    if (set?.size === 0) this.slicesBySvc.delete(old.svcKey);
    for (const e of old.endpoints) {
      const bys = this.byEndpointIP.get(ipKey(e.ip));
      bys?.delete(key);
      if (bys?.size === 0) this.byEndpointIP.delete(ipKey(e.ip));
    }
  }

  setNamespace(o: KObj, present: boolean): void {
    const name = o.metadata?.name ?? '';
    if (present) this.namespaces.add(name);
    else this.namespaces.delete(name);
    this.touch();
  }

  service(ns: string, name: string): ServiceInfo | undefined {
    return this.services.get(keyOf(ns, name));
  }

  /** A namespace exists when the API has it, or (no Namespace informer) when a Service lives in it. */
  namespaceExists(ns: string): boolean {
    return this.namespaces.has(ns) || this.servicesPerNs.has(ns);
  }

  /** The endpoints DNS publishes for a Service: ready ones (all with publishNotReadyAddresses), one per IP, with their slice's ports. */
  endpoints(svc: ServiceInfo): { endpoint: Endpoint; ports: ServicePort[] }[] {
    const out: { endpoint: Endpoint; ports: ServicePort[] }[] = [];
    const seen = new Set<string>();
    for (const key of this.slicesBySvc.get(keyOf(svc.ns, svc.name)) ?? []) {
      const s = this.slices.get(key)!;
      for (const e of s.endpoints) {
        if ((!e.ready && !svc.publishNotReady) || seen.has(e.ip)) continue;
        seen.add(e.ip);
        out.push({ endpoint: e, ports: s.ports });
      }
    }
    return out;
  }

  /** Names a PTR for this IP answers with: the Service owning the cluster IP, or each endpoint with this IP. */
  reverse(address: string): { svc: ServiceInfo; endpoint?: Endpoint }[] {
    const ip = ipKey(address);
    const svcKey = this.byClusterIP.get(ip);
    if (svcKey) {
      const svc = this.services.get(svcKey);
      if (svc) return [{ svc }];
    }
    const out: { svc: ServiceInfo; endpoint?: Endpoint }[] = [];
    for (const key of this.byEndpointIP.get(ip) ?? []) {
      const s = this.slices.get(key)!;
      const svc = this.services.get(s.svcKey);
      const e = s.endpoints.find((x) => ipKey(x.ip) === ip);
      if (svc && e && !out.some((o) => o.svc === svc)) out.push({ svc, endpoint: e });
    }
    return out;
  }
}
