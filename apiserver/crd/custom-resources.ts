// The custom resources a cluster serves, read through a client from its
// CustomResourceDefinitions (so the controllers that need them work against any apiserver).
import type { KObj, KubeApi } from '../../kube/client.js';
import type { ResourceDef } from '../resources.js';
import { servedResources } from './definition.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The resources the cluster's CustomResourceDefinitions serve, as a client sees them (for the garbage collector and namespace deletion). */
export async function customResources(client: KubeApi): Promise<ResourceDef[]> {
  const list = await client.get(CRDS).catch(() => ({ items: [] }) as unknown as KObj);
  return ((list.items ?? []) as KObj[]).flatMap((o) => servedResources(o));
}
