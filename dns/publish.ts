// The endpoints of the kube-dns Service. CoreDNS runs in pods and the
// EndpointSlice controller publishes them; this server runs on a node, so it
// publishes itself, as the apiserver does for default/kubernetes: an
// EndpointSlice (and a matching Endpoints) with its address and ports, ready
// only while it serves.
import { type KObj, type KubeApi, KubeApiError } from '../kube/client.js';

export const MANAGED_BY = 'tskube-dns';

export interface PublishTarget {
  namespace: string; // kube-system
  service: string; // kube-dns
  ip: string;
  dnsPort: number;
  metricsPort: number;
  nodeName?: string;
}

/** The EndpointSlice and Endpoints that say where the DNS server answers, and whether it does. */
export function endpointObjects(t: PublishTarget, ready: boolean): { slice: KObj; endpoints: KObj } {
  const ports = [
    { name: 'dns', port: t.dnsPort, protocol: 'UDP' },
    { name: 'dns-tcp', port: t.dnsPort, protocol: 'TCP' },
    { name: 'metrics', port: t.metricsPort, protocol: 'TCP' },
  ];
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${t.service}-${MANAGED_BY}`,
      namespace: t.namespace,
      labels: { 'kubernetes.io/service-name': t.service, 'endpointslice.kubernetes.io/managed-by': MANAGED_BY },
    },
    addressType: t.ip.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [
      {
        addresses: [t.ip],
        conditions: { ready, serving: ready, terminating: false },
        ...(t.nodeName ? { nodeName: t.nodeName } : {}),
      },
    ],
    ports,
  };
  const address = { ip: t.ip, ...(t.nodeName ? { nodeName: t.nodeName } : {}) };
  const endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: t.service,
      namespace: t.namespace,
      labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
    },
    subsets: [{ ...(ready ? { addresses: [address] } : { notReadyAddresses: [address] }), ports }],
  };
  return { slice, endpoints };
}

async function upsert(client: KubeApi, collection: string, want: KObj, same: (cur: KObj) => boolean): Promise<void> {
  const path = `${collection}/${want.metadata.name}`;
  let cur: KObj | undefined;
  try {
    cur = await client.get(path);
  } catch (e) {
    if (!(e instanceof KubeApiError && e.code === 404)) throw e;
  }
  if (!cur) await client.create(collection, want);
  else if (!same(cur))
    await client.update(path, {
      ...want,
      metadata: { ...want.metadata, resourceVersion: cur.metadata?.resourceVersion },
    });
}

export async function publishEndpoints(client: KubeApi, t: PublishTarget, ready: boolean): Promise<void> {
  const { slice, endpoints } = endpointObjects(t, ready);
  const json = JSON.stringify;
  await upsert(
    client,
    `/apis/discovery.k8s.io/v1/namespaces/${t.namespace}/endpointslices`,
    slice,
    (c) => json(c.endpoints) === json(slice.endpoints) && json(c.ports) === json(slice.ports),
  );
  await upsert(
    client,
    `/api/v1/namespaces/${t.namespace}/endpoints`,
    endpoints,
    (c) => json(c.subsets) === json(endpoints.subsets),
  );
}
