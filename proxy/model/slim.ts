// What the proxier's informers keep of each object (an informer transform,
// client-go's SetTransform): only the fields the proxier reads. managedFields,
// uids, timestamps and endpoints' targetRefs are a large share of what the
// informers would hold, and a process's size slows all of its work after a
// wake-up on small VMs (docs/benchmarks.md, "Engine settings").
import type { KObj } from '../../kube/client.js';
import { LABEL_SERVICE_NAME } from './endpoints.js';

/** The annotation the proxier reads for the network programming latency metric. */
export const TRIGGER_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** name, namespace and resourceVersion (the informer's key and relist check), and the chosen labels and annotations. */
function slimMeta(md: KObj | undefined, labels: readonly string[], annotations: readonly string[]): KObj {
  const out: KObj = { name: md?.name, namespace: md?.namespace, resourceVersion: md?.resourceVersion };
  const pick = (
    from: Record<string, string> | undefined,
    keys: readonly string[],
  ): Record<string, string> | undefined => {
    if (!from) return undefined;
    const kept = keys.filter((k) => from[k] !== undefined);
    return kept.length ? Object.fromEntries(kept.map((k) => [k, from[k]!])) : undefined;
  };
  const l = pick(md?.labels, labels);
  if (l) out.labels = l;
  const a = pick(md?.annotations, annotations);
  if (a) out.annotations = a;
  if (md?.deletionTimestamp) out.deletionTimestamp = md.deletionTimestamp;
  return out;
}

/** A Service as servicePorts() reads it: its spec and load balancer ingress. */
export function slimService(o: KObj): KObj {
  const out: KObj = { metadata: slimMeta(o.metadata, [], []), spec: o.spec };
  const ingress = o.status?.loadBalancer?.ingress;
  if (ingress) out.status = { loadBalancer: { ingress } };
  return out;
}

/** An EndpointSlice as endpointsOfSlices() reads it; endpoints lose their targetRef (a Pod reference each). */
export function slimEndpointSlice(o: KObj): KObj {
  const endpoints = (o.endpoints as KObj[] | undefined)?.map((e) => {
    const { targetRef: _ref, deprecatedTopology: _topo, ...kept } = e;
    return kept;
  });
  const out: KObj = {
    metadata: slimMeta(o.metadata, [LABEL_SERVICE_NAME], [TRIGGER_ANNOTATION]),
    addressType: o.addressType,
    ports: o.ports,
  };
  if (endpoints) out.endpoints = endpoints;
  return out;
}
