// EndpointSlices -> the endpoints of each service port (upstream
// endpointslicecache): slices are merged per Service, keyed by the port's
// name and protocol; only slices of the proxier's address family with a
// service-name label count; a
// duplicate ip:port keeps its non-terminating copy; endpoints sort by ip:port.
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import { canonicalIP, type IPFamily, joinHostPort } from './family.js';

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

export interface Endpoint {
  ip: string;
  port: number;
  /** "ip:port", "[ip6]:port" */
  addr: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** On this node (nodeName matches). */
  local: boolean;
  nodeName: string;
}

/** Endpoints per service port key (see portKey), built from the slices of one family of one Service. */
export function endpointsOfSlices(
  slices: EndpointSlice[],
  nodeName: string,
  family: IPFamily = 'IPv4',
): Map<string, Endpoint[]> {
  const out = new Map<string, Map<string, Endpoint>>();
  for (const s of slices) {
    if (s.addressType !== family || !s.metadata?.labels?.[LABEL_SERVICE_NAME]) continue;
    const svc = `${s.metadata.namespace ?? ''}/${s.metadata.labels[LABEL_SERVICE_NAME]}`;
    for (const p of s.ports ?? []) {
      if (p.name === undefined || p.name === null || !p.port) continue;
      const key = portKey(svc, p.name, p.protocol ?? 'TCP');
      let m = out.get(key);
      if (!m) out.set(key, (m = new Map()));
      for (const e of s.endpoints ?? []) {
        const ip = e.addresses?.[0] ? canonicalIP(e.addresses[0]) : '';
        if (!ip) continue;
        const c = e.conditions ?? {};
        const ep: Endpoint = {
          ip,
          port: p.port,
          addr: joinHostPort(ip, p.port),
          ready: c.ready !== false,
          serving: c.serving !== false,
          terminating: c.terminating === true,
          local: !!e.nodeName && e.nodeName === nodeName,
          nodeName: e.nodeName ?? '',
        };
        const prev = m.get(ep.addr);
        if (!prev || (prev.terminating && !ep.terminating)) m.set(ep.addr, ep);
      }
    }
  }
  return new Map(
    [...out].map(([k, m]) => [k, [...m.values()].sort((a, b) => (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0))]),
  );
}

/** Key of a service port for endpoint lookup: ServicePortName with protocol. */
export const portKey = (service: string, portName: string, protocol: string): string =>
  `${service}:${portName}/${protocol}`;
