// kube-public/cluster-info as kubeadm init writes it: a kubeconfig with the
// cluster CA and the apiserver's address, readable anonymously through the
// kubeadm:bootstrap-signer-clusterinfo Role, so a joining node can find and
// pin the control plane (bootstrapsigner adds the token signatures).
import { stringify } from 'yaml';

import { SYSTEM_USER } from '../api/admission.js';
import type { Api } from '../api/api.js';
import { storageKey } from '../resources.js';
import type { Obj } from '../storage/store.js';

export const CLUSTER_INFO = 'cluster-info';
export const PUBLIC_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_ROLE = 'kubeadm:bootstrap-signer-clusterinfo';

/** The kubeconfig kubeadm puts in cluster-info (clientcmd's serialization of a cluster-only config). */
export function clusterInfoKubeconfig(caPem: string, server: string): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(caPem).toString('base64'), server }, name: '' }],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
}

/** kubeadm's Role that lets anyone read cluster-info (and nothing else), and its binding to system:anonymous. */
export function clusterInfoReaders(): { role: Obj; binding: Obj } {
  const meta = { name: CLUSTER_INFO_ROLE, namespace: PUBLIC_NAMESPACE };
  return {
    role: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [CLUSTER_INFO], verbs: ['get'] }],
    },
    binding: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CLUSTER_INFO_ROLE },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' }],
    },
  };
}

/** Creates or corrects cluster-info's kubeconfig (signatures are kept: bootstrapsigner recomputes them), and the anonymous read Role. */
export function ensureClusterInfo(api: Api, caPem: string, server: string): void {
  const cms = api.res('', 'configmaps');
  const kubeconfig = clusterInfoKubeconfig(caPem, server);
  api.runAs(SYSTEM_USER, () => {
    const cur = api.store.get(storageKey(cms, PUBLIC_NAMESPACE, CLUSTER_INFO)) as Obj | undefined;
    if (!cur) api.create(cms, PUBLIC_NAMESPACE, { metadata: { name: CLUSTER_INFO }, data: { kubeconfig } });
    else if (cur.data?.kubeconfig !== kubeconfig)
      api.update(cms, PUBLIC_NAMESPACE, CLUSTER_INFO, { ...cur, data: { ...cur.data, kubeconfig } });
    const roles = api.res('rbac.authorization.k8s.io', 'roles');
    const bindings = api.res('rbac.authorization.k8s.io', 'rolebindings');
    const readers = clusterInfoReaders();
    if (!api.store.get(storageKey(roles, PUBLIC_NAMESPACE, CLUSTER_INFO_ROLE)))
      api.create(roles, PUBLIC_NAMESPACE, readers.role);
    if (!api.store.get(storageKey(bindings, PUBLIC_NAMESPACE, CLUSTER_INFO_ROLE)))
      api.create(bindings, PUBLIC_NAMESPACE, readers.binding);
  });
}
