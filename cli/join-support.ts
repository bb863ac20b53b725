// What a control plane needs before `tskube join` can work against it, as kubeadm
// init's bootstrap-token phase creates it: kube-public/cluster-info readable
// anonymously, and the bindings that let bootstrap tokens create node CSRs, get
// them approved and look up Nodes. tskube adds one binding of its own: joined
// nodes run the kube-proxy as a host process with the node's credentials, so
// system:nodes get the kube-proxy's role (kubeadm gives it to the kube-proxy
// DaemonSet's ServiceAccount instead). `tskube up` starts with all of it;
// `tskube token create` adds what a kubeadm-made or bare cluster lacks.
import { BOOTSTRAP_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from '../apiserver/authz/bootstrap-policy.js';
import {
  CLUSTER_INFO,
  CLUSTER_INFO_ROLE,
  clusterInfoKubeconfig,
  clusterInfoReaders,
  PUBLIC_NAMESPACE,
} from '../apiserver/bootstrap/cluster-info.js';
import { type KObj, KubeApiError, type KubeClient } from '../kube/client.js';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_PATH = `/apis/${RBAC}/v1`;

const JOIN_BINDINGS = [
  'kubeadm:apiserver-kubelet-client',
  'kubeadm:kubelet-bootstrap',
  'kubeadm:node-autoapprove-bootstrap',
  'kubeadm:node-autoapprove-certificate-rotation',
  'kubeadm:get-nodes',
  'tskube:node-proxier',
];

export interface ClusterObject {
  /** The collection to create it in. */
  collection: string;
  obj: KObj;
  /** How a user would name it in a message. */
  what: string;
}

/** Everything join needs, for a cluster served at `server` with CA `caPem`. */
export function joinSupportObjects(server: string, caPem: string): ClusterObject[] {
  const readers = clusterInfoReaders();
  const out: ClusterObject[] = [
    {
      collection: `/api/v1/namespaces/${PUBLIC_NAMESPACE}/configmaps`,
      obj: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CLUSTER_INFO, namespace: PUBLIC_NAMESPACE },
        data: { kubeconfig: clusterInfoKubeconfig(caPem, server) },
      },
      what: `ConfigMap ${PUBLIC_NAMESPACE}/${CLUSTER_INFO}`,
    },
    {
      collection: `${RBAC_PATH}/namespaces/${PUBLIC_NAMESPACE}/roles`,
      obj: readers.role,
      what: `Role ${PUBLIC_NAMESPACE}/${CLUSTER_INFO_ROLE}`,
    },
    {
      collection: `${RBAC_PATH}/namespaces/${PUBLIC_NAMESPACE}/rolebindings`,
      obj: readers.binding,
      what: `RoleBinding ${PUBLIC_NAMESPACE}/${CLUSTER_INFO_ROLE}`,
    },
    {
      collection: `${RBAC_PATH}/clusterroles`,
      obj: {
        apiVersion: `${RBAC}/v1`,
        kind: 'ClusterRole',
        metadata: { name: 'kubeadm:get-nodes' },
        rules: BOOTSTRAP_CLUSTER_ROLES['kubeadm:get-nodes'],
      },
      what: 'ClusterRole kubeadm:get-nodes',
    },
  ];
  for (const name of JOIN_BINDINGS) {
    const b = BOOTSTRAP_BINDINGS[name]!;
    out.push({
      collection: `${RBAC_PATH}/clusterrolebindings`,
      obj: {
        apiVersion: `${RBAC}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name },
        roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: b.role },
        subjects: b.subjects,
      },
      what: `ClusterRoleBinding ${name}`,
    });
  }
  return out;
}

const pathOf = (o: ClusterObject): string => `${o.collection}/${encodeURIComponent(o.obj.metadata.name as string)}`;

/** Creates the objects that are missing; returns what it created. Existing ones are left as they are. */
export async function ensureJoinSupport(client: KubeClient, objects: ClusterObject[]): Promise<string[]> {
  const created: string[] = [];
  for (const o of objects) {
    try {
      await client.get(pathOf(o));
      continue;
    } catch (e) {
      if (!(e instanceof KubeApiError) || e.code !== 404) throw e;
    }
    await client.create(o.collection, o.obj);
    created.push(o.what);
  }
  return created;
}
