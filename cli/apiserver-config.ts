// `tskube apiserver` flags (kube-apiserver names where one exists).
import os from 'node:os';

import type { ApiServerConfig } from '../apiserver/main.js';
import { commaList as list, durationFlag as duration, parseBool, parseFlags } from './flags.js';

export const APISERVER_FLAGS: Record<string, string> = {
  'cert-dir': 'CA, serving and client certificates, tokens.csv and kubeconfigs. Default /var/lib/tskube/pki',
  'data-dir': "persist objects here (fsync'd log); in memory only when unset",
  'bind-address': 'address to listen on. Default 0.0.0.0',
  'secure-port': 'HTTPS port. Default 6443',
  'advertise-address': 'node IP put in the serving certificate and kubeconfigs',
  'service-cluster-ip-range':
    'ClusterIP range; two comma-separated CIDRs, one per IP family, for dual-stack Services (the first is primary). Default 10.96.0.0/12',
  'node-kubeconfigs': 'comma-separated node names to write kubeconfigs for. Default: this hostname',
  'anonymous-auth':
    'true: requests without credentials are system:anonymous (discovery only, else 403) instead of 401. Default false',
  'authorization-mode':
    'comma-separated authorizers, in order: AlwaysAllow, Node, RBAC (e.g. Node,RBAC). Default AlwaysAllow',
  'enable-admission-plugins':
    'comma-separated admission plugins to turn on: NodeRestriction (nodes may only touch their own Node, Lease, mirror pods and bound pods), DenyServiceExternalIPs (no new externalIPs on Services). Always on: PodSecurity, CertificateApproval, CertificateSigning, CertificateSubjectRestriction',
  'admission-control-config-file':
    "an AdmissionConfiguration file: PodSecurity's defaults and exemptions (a PodSecurityConfiguration). Default: privileged everywhere, nothing exempt",
  controllers:
    'built-in controllers to run, kube-controller-manager style: "*" for all, "-name" to turn one off (see docs/apiserver.md for the names). Default *',
  'node-monitor-grace-period':
    'how long a node may go without renewing its Lease before it is marked Unknown. Default 40s',
  'node-monitor-period': 'how often node health is checked. Default 5s',
  'event-ttl': 'how long Events are kept after their last write. Default 1h',
  'allocate-node-cidrs': 'give every Node a spec.podCIDR from --cluster-cidr (node-ipam-controller). Default false',
  'cluster-cidr':
    "the pods' address range, cut into one podCIDR per Node; two comma-separated CIDRs, one per IP family, for dual stack (podCIDRs). Default 10.244.0.0/16",
  'node-cidr-mask-size': "prefix length of each Node's podCIDR (single stack). Default 24 (IPv4), 64 (IPv6)",
  'node-cidr-mask-size-ipv4': "prefix length of each Node's IPv4 podCIDR (dual stack). Default 24",
  'node-cidr-mask-size-ipv6': "prefix length of each Node's IPv6 podCIDR (dual stack). Default 64",
  'default-local-storage-path':
    "where the local-path provisioner makes volumes on the chosen node (k3s's flag). Default /var/lib/tskube/storage",
  'cluster-signing-duration':
    "the longest certificate the CSR signer issues (kube-controller-manager's flag). Default 8760h0m0s",
};

/** A prefix-length flag: undefined when not given (the defaults depend on the family). */
function maskFlag(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`--${name}: invalid prefix length "${v}"`);
  return Number(v);
}

export function loadApiServerConfig(argv: string[]): ApiServerConfig {
  const f = parseFlags(argv, APISERVER_FLAGS);
  const port = Number(f.get('secure-port') ?? 6443);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--secure-port: invalid port "${f.get('secure-port')!}"`);
  return {
    certDir: f.get('cert-dir') ?? '/var/lib/tskube/pki',
    dataDir: f.get('data-dir'),
    bindAddress: f.get('bind-address') ?? '0.0.0.0',
    securePort: port,
    advertiseAddress: f.get('advertise-address') ?? '',
    serviceClusterIpRange: f.get('service-cluster-ip-range') ?? '10.96.0.0/12',
    anonymousAuth: parseBool(f.get('anonymous-auth') ?? 'false', 'anonymous-auth'),
    admissionPlugins: list(f.get('enable-admission-plugins') ?? ''),
    admissionControlConfigFile: f.get('admission-control-config-file'),
    authorizationModes: list(f.get('authorization-mode') ?? 'AlwaysAllow'),
    controllers: list(f.get('controllers') ?? '*'),
    nodeMonitorGracePeriodMs: duration(f, 'node-monitor-grace-period', '40s'),
    nodeMonitorPeriodMs: duration(f, 'node-monitor-period', '5s'),
    eventTtlMs: duration(f, 'event-ttl', '1h'),
    allocateNodeCidrs: parseBool(f.get('allocate-node-cidrs') ?? 'false', 'allocate-node-cidrs'),
    clusterCidr: f.get('cluster-cidr') ?? '10.244.0.0/16',
    nodeCidrMaskSize: maskFlag(f.get('node-cidr-mask-size'), 'node-cidr-mask-size'),
    nodeCidrMaskSizeIPv4: maskFlag(f.get('node-cidr-mask-size-ipv4'), 'node-cidr-mask-size-ipv4'),
    nodeCidrMaskSizeIPv6: maskFlag(f.get('node-cidr-mask-size-ipv6'), 'node-cidr-mask-size-ipv6'),
    clusterSigningDurationMs: duration(f, 'cluster-signing-duration', '8760h'),
    localStoragePath: f.get('default-local-storage-path'),
    nodeNames: (f.get('node-kubeconfigs') ?? os.hostname().toLowerCase())
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
}
