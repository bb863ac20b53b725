// The cluster DNS add-on `tskube up` installs, as kubeadm's CoreDNS phase does:
// RBAC for the server's user (kubeadm's system:coredns rules, plus writing
// the kube-dns endpoints, which it publishes itself) and the kube-system/kube-dns
// Service on the 10th address of the Service range. No selector: the
// server, not a pod, is the endpoint.
import { KubeApiError, KubeClient, type KObj } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { ipToString, parseCidr } from '../kube/cidr.js';

export const DNS_USER = 'system:coredns';

/** kubeadm's DNS Service address: the 10th of the Service range (10.96.0.10 for 10.96.0.0/12). */
export function dnsServiceIP(serviceCidr: string): string {
  const { base, size } = parseCidr(serviceCidr);
  if (size < 16) throw new Error(`service CIDR ${serviceCidr} is too small for the DNS Service's 10th address`);
  return ipToString((base + 10) >>> 0);
}

export function dnsAddonObjects(serviceIP: string, dnsPort: number, metricsPort: number): { path: string; obj: KObj }[] {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const labels = { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' };
  return [
    {
      path: `${rbac}/clusterroles`,
      obj: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'system:coredns' },
        rules: [
          { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
          // tskube's ACL answers the cluster's node addresses (pods on other nodes arrive masqueraded to them).
          { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
        ],
      },
    },
    { path: `${rbac}/clusterrolebindings`, obj: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'system:coredns' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: DNS_USER }] } },
    {
      path: `${rbac}/namespaces/kube-system/roles`,
      obj: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'tskube:dns-endpoints', namespace: 'kube-system' },
        rules: [
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'create', 'update'] },
          { apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'create', 'update'] },
        ],
      },
    },
    { path: `${rbac}/namespaces/kube-system/rolebindings`, obj: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'tskube:dns-endpoints', namespace: 'kube-system' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tskube:dns-endpoints' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: DNS_USER }] } },
    {
      path: '/api/v1/namespaces/kube-system/services',
      obj: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kube-dns', namespace: 'kube-system', labels, annotations: { 'prometheus.io/port': String(metricsPort), 'prometheus.io/scrape': 'true' } },
        spec: {
          clusterIP: serviceIP,
          ports: [
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: dnsPort },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: dnsPort },
            { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: metricsPort },
          ],
        },
      },
    },
  ];
}

/** Creates what is missing; what exists is left as the admin may have changed it. */
export async function ensureDnsAddon(adminKubeconfig: string, serviceIP: string, dnsPort: number, metricsPort: number): Promise<void> {
  const client = new KubeClient(loadKubeconfig(adminKubeconfig));
  try {
    for (const { path, obj } of dnsAddonObjects(serviceIP, dnsPort, metricsPort)) {
      await client.create(path, obj).catch((e: unknown) => {
        if (!(e instanceof KubeApiError && e.code === 409)) throw e;
      });
    }
  } finally {
    client.close();
  }
}
