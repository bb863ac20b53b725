// Test-only: Services and EndpointSlices in upstream proxier_test's conventions (pods in 10.0.0.0/8, cluster IPs in
// 172.30.0.0/16, this node "test-node"), shared by both modes' renderer tests.
import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

export const NODE = 'test-node';

export function svc(
  ns: string,
  name: string,
  spec: Record<string, unknown>,
  status?: Record<string, unknown>,
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: ns, name },
    spec: { type: 'ClusterIP', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }], ...spec },
    ...(status ? { status } : {}),
  } as Service;
}

export type Ep = { ip: string; node?: string; ready?: boolean; serving?: boolean; terminating?: boolean };

/** A slice of the family of its first endpoint (an IPv6 one is named apart, as the controller's are). */
export function slice(
  ns: string,
  service: string,
  eps: Ep[],
  port = 80,
  portName = 'p80',
  protocol = 'TCP',
): EndpointSlice {
  const v6 = !!eps[0]?.ip.includes(':');
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      namespace: ns,
      name: `${service}-abc${v6 ? '6' : ''}`,
      labels: { 'kubernetes.io/service-name': service },
    },
    addressType: v6 ? 'IPv6' : 'IPv4',
    ports: [{ name: portName, port, protocol }],
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      nodeName: e.node,
      conditions: {
        ready: e.ready ?? true,
        serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false,
      },
    })),
  } as EndpointSlice;
}
