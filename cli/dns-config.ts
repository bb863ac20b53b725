// `tskube dns` flags. The defaults are CoreDNS's (:53, /health on :8080,
// /ready on :8181, /metrics on :9153, TTL 5, forward to /etc/resolv.conf).
import net from 'node:net';

import { parseAllowFrom } from '../dns/acl.js';
import type { DnsConfig } from '../dns/config.js';
import { checkDns1123Subdomain } from '../kube/names.js';
import { commaList, parseFlags } from './flags.js';

export const DNS_FLAGS: Record<string, string> = {
  kubeconfig: 'kubeconfig of the apiserver (needs list/watch of services, endpointslices, namespaces)',
  'cluster-domain': "the zone served, as the kubelet's --cluster-domain. Default cluster.local",
  'dns-address': 'UDP and TCP listen address. Default 0.0.0.0:53',
  'health-address': '/health (CoreDNS health plugin). Default 0.0.0.0:8080',
  'ready-address': '/ready (CoreDNS ready plugin). Default 0.0.0.0:8181',
  'metrics-address': '/metrics with CoreDNS metric names. Default 0.0.0.0:9153',
  upstream:
    'comma-separated resolvers for names outside the cluster (ip or ip:port). Default: the nameservers of --resolv-conf',
  'resolv-conf': 'resolv.conf whose nameservers are the upstreams. Default /etc/resolv.conf',
  ttl: 'TTL of cluster records, 0-3600 seconds. Default 5',
  'publish-address':
    'the address clients reach this server on; when set, the server publishes it as the endpoints of kube-system/kube-dns (ready only while serving)',
  'hostname-override': 'node name written into the published endpoint',
  v: 'log verbosity (4 and up: debug)',
  'allow-from':
    "comma-separated client CIDRs answered besides loopback and this host's own addresses; others get REFUSED. Default 10.244.0.0/16,10.96.0.0/12 (the pod and Service ranges)",
};

export function loadDnsConfig(argv: string[]): DnsConfig {
  const f = parseFlags(argv, DNS_FLAGS);
  const kubeconfig = f.get('kubeconfig');
  if (!kubeconfig) throw new Error('--kubeconfig is required');
  const clusterDomain = (f.get('cluster-domain') ?? 'cluster.local').replace(/\.$/, '').toLowerCase();
  const bad = checkDns1123Subdomain(clusterDomain);
  if (bad) throw new Error(`--cluster-domain: "${clusterDomain}": ${bad}`);
  const ttl = Number(f.get('ttl') ?? 5);
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 3600)
    throw new Error(`--ttl: must be an integer from 0 to 3600, got "${f.get('ttl')}"`);
  const publishAddress = f.get('publish-address') ?? '';
  if (publishAddress && !net.isIP(publishAddress))
    throw new Error(`--publish-address: "${publishAddress}" is not an IP address`);
  return {
    kubeconfig,
    clusterDomain,
    dnsAddress: f.get('dns-address') ?? '0.0.0.0:53',
    healthAddress: f.get('health-address') ?? '0.0.0.0:8080',
    readyAddress: f.get('ready-address') ?? '0.0.0.0:8181',
    metricsAddress: f.get('metrics-address') ?? '0.0.0.0:9153',
    upstreams: commaList(f.get('upstream') ?? ''),
    resolvConf: f.get('resolv-conf') ?? '/etc/resolv.conf',
    ttl,
    publishAddress,
    nodeName: f.get('hostname-override') ?? '',
    allowFrom: parseAllowFrom(commaList(f.get('allow-from') ?? '10.244.0.0/16,10.96.0.0/12')),
    verbosity: Number(f.get('v') ?? 0),
  };
}
