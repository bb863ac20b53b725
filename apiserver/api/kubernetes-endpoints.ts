// The endpoints of the default/kubernetes Service, which the apiserver itself
// keeps (upstream's master endpoint reconciler): an Endpoints object and an
// EndpointSlice pointing at this apiserver's advertised address and port, so
// in-cluster clients reach it through the Service's ClusterIP.
import type { Obj } from '../storage/store.js';
import type { Api } from './api.js';

const SLICE_LABELS = { 'kubernetes.io/service-name': 'kubernetes' };

function upsert(api: Api, group: string, resource: string, want: Obj, same: (cur: Obj) => boolean): void {
  const r = api.res(group, resource);
  const cur = api.find(r, 'default', want.metadata.name);
  if (!cur) api.create(r, 'default', want);
  else if (!same(cur))
    api.update(r, 'default', want.metadata.name, {
      ...want,
      metadata: { ...want.metadata, resourceVersion: cur.metadata.resourceVersion },
    });
}

export function reconcileKubernetesEndpoints(api: Api, ip: string, port: number): void {
  const svcR = api.res('', 'services');
  const svc = api.find(svcR, 'default', 'kubernetes');
  if (svc && svc.spec.ports?.[0]?.targetPort !== port) {
    svc.spec.ports = [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }];
    api.update(svcR, 'default', 'kubernetes', svc);
  }
  const subsets = [{ addresses: [{ ip }], ports: [{ name: 'https', port, protocol: 'TCP' }] }];
  upsert(
    api,
    '',
    'endpoints',
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kubernetes', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets,
    },
    (c) => JSON.stringify(c.subsets) === JSON.stringify(subsets),
  );
  const endpoints = [{ addresses: [ip], conditions: { ready: true } }];
  const ports = [{ name: 'https', port, protocol: 'TCP' }];
  upsert(
    api,
    'discovery.k8s.io',
    'endpointslices',
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', labels: SLICE_LABELS },
      addressType: 'IPv4',
      endpoints,
      ports,
    },
    (c) =>
      JSON.stringify(c.endpoints) === JSON.stringify(endpoints) && JSON.stringify(c.ports) === JSON.stringify(ports),
  );
}
