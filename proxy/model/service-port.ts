// Services -> the service ports kube-proxy programs (upstream
// BaseServicePortInfo): one per Service port, keyed "ns/name:port" (the port
// name is left out when empty), with the traffic policies and addresses that
// decide which rules it gets. Headless and ExternalName Services get none.
// A dual-stack proxy asks once per family: a Service's port in that family
// has the family's cluster IP and only that family's other addresses.
import type { Service } from 'kubernetes-types/core/v1.js';

import { canonicalIP, familyOf, type IPFamily, ofFamily } from './family.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePort {
  /** "ns/name:port" or "ns/name" (upstream ServicePortName.String()). */
  name: string;
  /** "ns/name": the unit of change tracking. */
  service: string;
  portName: string;
  protocol: Protocol;
  clusterIP: string;
  port: number;
  nodePort: number;
  externalIPs: string[];
  loadBalancerIPs: string[];
  loadBalancerSourceRanges: string[];
  /** ClientIP session affinity timeout in seconds, or 0 for none. */
  stickySeconds: number;
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
  healthCheckNodePort: number;
}

export function externallyAccessible(sp: ServicePort): boolean {
  return sp.nodePort > 0 || sp.loadBalancerIPs.length > 0 || sp.externalIPs.length > 0;
}

/** Upstream UsesClusterEndpoints / UsesLocalEndpoints: external traffic with Local policy still needs the Cluster
 * endpoints, for the short-circuit of pod and node traffic. */
export function usesClusterEndpoints(sp: ServicePort): boolean {
  return !sp.internalPolicyLocal || externallyAccessible(sp);
}
export function usesLocalEndpoints(sp: ServicePort): boolean {
  return sp.internalPolicyLocal || (externallyAccessible(sp) && sp.externalPolicyLocal);
}

/** A Service's ports in one family (its cluster IP of that family); [] for headless, ExternalName or IP-less Services. */
export function servicePorts(svc: Service, family: IPFamily = 'IPv4'): ServicePort[] {
  const spec = svc.spec;
  const md = svc.metadata ?? {};
  if (!spec || spec.type === 'ExternalName') return [];
  const clusterIP = canonicalIP(
    (spec.clusterIPs?.length ? spec.clusterIPs : [spec.clusterIP ?? '']).find((ip) => familyOf(ip) === family) ?? '',
  );
  if (!clusterIP) return [];
  const service = `${md.namespace ?? ''}/${md.name ?? ''}`;
  // ipMode Proxy: the load balancer delivers to the node itself, so its IP must not be short-circuited here (upstream).
  const lbIPs = ((svc.status?.loadBalancer?.ingress ?? []) as { ip?: string; ipMode?: string }[])
    .filter((i) => i.ipMode !== 'Proxy')
    .map((i) => i.ip ?? '')
    .filter((ip) => familyOf(ip) === family)
    .map(canonicalIP);
  const externalLocal =
    (spec.type === 'NodePort' || spec.type === 'LoadBalancer') && spec.externalTrafficPolicy === 'Local';
  const sticky =
    spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800) : 0;
  return (spec.ports ?? []).map((p) => {
    const portName = p.name ?? '';
    return {
      name: portName ? `${service}:${portName}` : service,
      service,
      portName,
      protocol: (p.protocol ?? 'TCP') as Protocol,
      clusterIP,
      port: p.port,
      nodePort: spec.type === 'NodePort' || spec.type === 'LoadBalancer' ? (p.nodePort ?? 0) : 0,
      externalIPs: ofFamily(spec.externalIPs, family),
      loadBalancerIPs: spec.type === 'LoadBalancer' ? lbIPs : [],
      loadBalancerSourceRanges: spec.type === 'LoadBalancer' ? ofFamily(spec.loadBalancerSourceRanges, family) : [],
      stickySeconds: sticky,
      externalPolicyLocal: externalLocal,
      internalPolicyLocal: spec.internalTrafficPolicy === 'Local',
      healthCheckNodePort: externalLocal && spec.type === 'LoadBalancer' ? (spec.healthCheckNodePort ?? 0) : 0,
    };
  });
}
