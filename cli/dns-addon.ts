// The cluster DNS add-on `tskube up` installs, as kubeadm's CoreDNS phase does:
// RBAC for the server's user (kubeadm's system:coredns rules, plus writing
// the kube-dns endpoints, which it publishes itself) and the kube-system/kube-dns
// Service on the 10th address of the Service range. No selector: the
// server, not a pod, is the endpoint.
import { ipToString, parseCidr } from '../kube/cidr.js';
import { type KObj, KubeApiError, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { parseFlags } from './flags.js';

export const DNS_USER = 'system:coredns';

/** kubeadm's DNS Service address: the 10th of the Service range (10.96.0.10 for 10.96.0.0/12). */
export function dnsServiceIP(serviceCidr: string): string {
  const { base, size } = parseCidr(serviceCidr);
  if (size < 16) throw new Error(`service CIDR ${serviceCidr} is too small for the DNS Service's 10th address`);
  return ipToString((base + 10) >>> 0);
}

export function dnsAddonObjects(
  serviceIP: string,
  dnsPort: number,
  metricsPort: number,
): { path: string; obj: KObj }[] {
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
    {
      path: `${rbac}/clusterrolebindings`,
      obj: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'system:coredns' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: DNS_USER }],
      },
    },
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
    {
      path: `${rbac}/namespaces/kube-system/rolebindings`,
      obj: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'tskube:dns-endpoints', namespace: 'kube-system' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tskube:dns-endpoints' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: DNS_USER }],
      },
    },
    {
      path: '/api/v1/namespaces/kube-system/services',
      obj: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'kube-dns',
          namespace: 'kube-system',
          labels,
          annotations: { 'prometheus.io/port': String(metricsPort), 'prometheus.io/scrape': 'true' },
        },
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
export async function ensureDnsAddon(
  adminKubeconfig: string,
  serviceIP: string,
  dnsPort: number,
  metricsPort: number,
): Promise<void> {
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

export const ADDON_FLAGS: Record<string, string> = {
  kubeconfig: "a cluster admin's kubeconfig (kubeadm's /etc/kubernetes/admin.conf). Required",
  'service-cidr': "the cluster's Service range; the kube-dns Service gets its 10th address. Default 10.96.0.0/12",
  'dns-port': "the port `tskube dns` answers on (the Service's targetPort). Default 53",
  'metrics-port': 'the port of its /metrics. Default 9153',
};

/**
 * `tskube addon dns`: the cluster DNS add-on on any control plane, as `kubeadm init phase addon coredns`
 * installs CoreDNS's: the kube-dns Service and the RBAC of the user `tskube dns` runs as (system:coredns).
 */
export async function runAddon(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<void> {
  const [name, ...rest] = argv;
  if (name !== 'dns') throw new Error('usage: tskube addon dns --kubeconfig <admin kubeconfig> [--service-cidr …]');
  const f = parseFlags(rest, ADDON_FLAGS);
  const kubeconfig = f.get('kubeconfig');
  if (!kubeconfig) throw new Error("addon dns: --kubeconfig is required (a cluster admin's)");
  const port = (flag: string, dflt: number): number => {
    const v = Number(f.get(flag) ?? dflt);
    if (!Number.isInteger(v) || v < 1 || v > 65535) throw new Error(`--${flag}: invalid port "${f.get(flag)!}"`);
    return v;
  };
  const ip = dnsServiceIP(f.get('service-cidr') ?? '10.96.0.0/12');
  await ensureDnsAddon(kubeconfig, ip, port('dns-port', 53), port('metrics-port', 9153));
  out(
    `kube-system/kube-dns at ${ip}: the cluster DNS add-on is in place; run \`tskube dns\` as ${DNS_USER} with --publish-address\n`,
  );
}
