// The pod's /etc/hosts, as upstream's kubelet writes it (kubelet_pods.go):
// a managed file with localhost, the IPv6 names, the pod's IPs under its
// hostname (and FQDN with a subdomain) and spec.hostAliases; host-network pods
// get the node's own hosts file with the aliases appended. Pure.
import type { HostAlias, Pod } from 'kubernetes-types/core/v1.js';

export const MANAGED_HEADER = '# Kubernetes-managed hosts file.\n';
export const MANAGED_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

/** The pod's hostname (spec.hostname or its name, cut to 63 characters without a trailing - or .) and domain. */
/** Upstream truncatePodHostnameIfNeeded: at most 63 characters, not ending in '-' or '.'. */
const truncateHostname = (h: string): string => (h.length > 63 ? h.slice(0, 63).replace(/[-.]+$/, '') : h);

export function podHostnameAndDomain(pod: Pod, clusterDomain: string): { hostname: string; domain: string } {
  const spec = (pod.spec ?? { containers: [] }) as NonNullable<Pod['spec']> & { hostnameOverride?: string };
  const md = pod.metadata ?? {};
  // hostnameOverride (GA in v1.37) is the whole hostname: no subdomain, no FQDN.
  if (spec.hostnameOverride) return { hostname: truncateHostname(spec.hostnameOverride), domain: '' };
  const hostname = truncateHostname(spec.hostname || md.name || '');
  const domain = spec.subdomain ? `${spec.subdomain}.${md.namespace ?? 'default'}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

function aliasLines(aliases: HostAlias[]): string {
  if (!aliases.length) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/** The file's content: managed for pods with their own network, the node's file for host-network pods. */
export function etcHostsContent(pod: Pod, o: { podIPs: string[]; clusterDomain: string; nodeHosts?: string }): string {
  const aliases = pod.spec?.hostAliases ?? [];
  if (pod.spec?.hostNetwork) return `${MANAGED_HEADER_HOST_NETWORK}${o.nodeHosts ?? ''}${aliasLines(aliases)}`;
  const { hostname, domain } = podHostnameAndDomain(pod, o.clusterDomain);
  const own = o.podIPs
    .map((ip) => (domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`))
    .join('');
  return `${MANAGED_HEADER}127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n${own}${aliasLines(aliases)}`;
}

/** Whether the kubelet mounts its file: the pod has IPs and the container does not mount /etc/hosts itself. */
export function mountsEtcHosts(container: { volumeMounts?: { mountPath: string }[] }, podIPs: string[]): boolean {
  return (
    podIPs.length > 0 && !(container.volumeMounts ?? []).some((m) => m.mountPath.replace(/\/+$/, '') === '/etc/hosts')
  );
}
