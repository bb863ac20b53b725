// kube-proxy flags and the supported subset of KubeProxyConfiguration
// (kubeproxy.config.k8s.io/v1alpha1). Flags win over the config file.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';

import { parse as parseYaml } from 'yaml';

import type { ProxyConfig } from '../proxy/config.js';
import { CONNTRACK_DEFAULTS, type ConntrackConfig } from '../proxy/conntrack-sysctls.js';
import { DETECT_LOCAL_MODES, type DetectLocal, type DetectLocalMode } from '../proxy/model/local-detector.js';
import { parseDuration } from './duration.js';
import { commaList, parseBool, parseFlags } from './flags.js';

export const PROXY_FLAGS: Record<string, string> = {
  kubeconfig: 'kubeconfig of the apiserver (config: clientConnection.kubeconfig)',
  'hostname-override': 'node name, for local endpoints (config: hostnameOverride). Default: the hostname',
  'bind-address':
    "this node's primary IP, overriding the Node's InternalIP and with it the primary IP family; no socket is bound to it (config: bindAddress). Default 0.0.0.0",
  'cluster-cidr': 'pod CIDR; traffic to cluster IPs from outside it is masqueraded (config: clusterCIDR)',
  'masquerade-all': 'SNAT all traffic sent to cluster IPs (config: iptables.masqueradeAll). Default false',
  'proxy-mode': 'iptables or nftables (config: mode). Default iptables',
  cleanup: 'remove the iptables and nftables rules of both proxy modes, then exit (--cleanup=true)',
  'nodeport-addresses':
    'comma-separated CIDRs, or "primary", for the addresses NodePorts accept (config: nodePortAddresses). Default: every local address in iptables mode, primary in nftables mode',
  config: 'KubeProxyConfiguration YAML file',
  'iptables-sync-period':
    'periodic sync interval (config: iptables.syncPeriod, nftables.syncPeriod or syncPeriod). Default 30s',
  'iptables-min-sync-period':
    'minimum time between syncs (config: iptables.minSyncPeriod, nftables.minSyncPeriod or minSyncPeriod). Default 1s',
  'iptables-masquerade-bit':
    'fwmark bit for packets to SNAT, 0-31 (config: iptables.masqueradeBit or nftables.masqueradeBit). Default 14',
  'iptables-localhost-nodeports':
    'NodePorts on 127.0.0.1 (sets route_localnet) (config: iptables.localhostNodePorts). Default true',
  'detect-local-mode':
    "how pod traffic is told from other traffic: ClusterCIDR, NodeCIDR (the Node's spec.podCIDR), BridgeInterface or InterfaceNamePrefix (config: detectLocalMode). Default ClusterCIDR",
  'pod-bridge-interface':
    'the bridge pods are on, for --detect-local-mode=BridgeInterface (config: detectLocal.bridgeInterface)',
  'pod-interface-name-prefix':
    'the prefix of pod interfaces, for --detect-local-mode=InterfaceNamePrefix (config: detectLocal.interfaceNamePrefix)',
  'conntrack-max-per-core':
    'conntrack entries per CPU; 0 leaves nf_conntrack_max alone (config: conntrack.maxPerCore). Default 32768',
  'conntrack-min': 'the least nf_conntrack_max to set (config: conntrack.min). Default 131072',
  'conntrack-tcp-timeout-established':
    'idle timeout of established TCP entries; 0 leaves it (config: conntrack.tcpEstablishedTimeout). Default 24h',
  'conntrack-tcp-timeout-close-wait':
    'timeout of CLOSE_WAIT TCP entries; 0 leaves it (config: conntrack.tcpCloseWaitTimeout). Default 1h',
  'conntrack-tcp-be-liberal':
    'set nf_conntrack_tcp_be_liberal, so out-of-window packets are not marked INVALID (config: conntrack.tcpBeLiberal). Default false',
  'conntrack-udp-timeout': 'timeout of unreplied UDP entries; 0 leaves it (config: conntrack.udpTimeout). Default 0',
  'conntrack-udp-timeout-stream': 'timeout of UDP streams; 0 leaves it (config: conntrack.udpStreamTimeout). Default 0',
  'healthz-bind-address': '/healthz and /livez (config: healthzBindAddress). Default 0.0.0.0:10256',
  'metrics-bind-address': '/metrics (config: metricsBindAddress). Default 127.0.0.1:10249',
  v: 'log verbosity (4 and up: debug)',
};

type Obj = Record<string, unknown>;
const TOP = new Set([
  'apiVersion',
  'kind',
  'clientConnection',
  'hostnameOverride',
  'clusterCIDR',
  'mode',
  'iptables',
  'nftables',
  'nodePortAddresses',
  'detectLocalMode',
  'detectLocal',
  'conntrack',
  'healthzBindAddress',
  'metricsBindAddress',
  'syncPeriod',
  'minSyncPeriod',
]);
const NFTABLES = new Set(['masqueradeAll', 'masqueradeBit', 'syncPeriod', 'minSyncPeriod']);
const IPTABLES = new Set(['masqueradeAll', 'masqueradeBit', 'syncPeriod', 'minSyncPeriod', 'localhostNodePorts']);
const CLIENT = new Set(['kubeconfig']);
const DETECT_LOCAL = new Set(['bridgeInterface', 'interfaceNamePrefix']);
const CONNTRACK = new Set([
  'maxPerCore',
  'min',
  'tcpEstablishedTimeout',
  'tcpCloseWaitTimeout',
  'tcpBeLiberal',
  'udpTimeout',
  'udpStreamTimeout',
]);

function readConfig(file: string, warn: (m: string) => void): Obj {
  let doc: unknown;
  try {
    doc = parseYaml(fs.readFileSync(file, 'utf8'), { version: '1.1' });
  } catch (e) {
    throw new Error(`${file}: cannot read KubeProxyConfiguration: ${(e as Error).message}`, { cause: e });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error(`${file}: expected a KubeProxyConfiguration object`);
  const o = doc as Obj;
  if (o.kind !== 'KubeProxyConfiguration')
    throw new Error(`${file}: kind: must be "KubeProxyConfiguration", got ${JSON.stringify(o.kind)}`);
  if (o.apiVersion !== 'kubeproxy.config.k8s.io/v1alpha1')
    throw new Error(
      `${file}: apiVersion: must be "kubeproxy.config.k8s.io/v1alpha1", got ${JSON.stringify(o.apiVersion)}`,
    );
  const check = (obj: unknown, allowed: Set<string>, prefix: string): void => {
    if (obj === undefined || obj === null) return;
    if (typeof obj !== 'object' || Array.isArray(obj))
      throw new Error(`${file}: ${prefix.slice(0, -1)}: must be an object`);
    for (const k of Object.keys(obj))
      if (!allowed.has(k)) warn(`${file}: field ${prefix}${k} is not supported by this kube-proxy and is ignored`);
  };
  check(o, TOP, '');
  check(o.iptables, IPTABLES, 'iptables.');
  check(o.nftables, NFTABLES, 'nftables.');
  check(o.clientConnection, CLIENT, 'clientConnection.');
  check(o.detectLocal, DETECT_LOCAL, 'detectLocal.');
  check(o.conntrack, CONNTRACK, 'conntrack.');
  return o;
}

const CIDR = /^(\d+\.\d+\.\d+\.\d+\/\d+|[0-9a-fA-F:]+\/\d+)$/;

/** --nodeport-addresses as upstream validates it: "primary", or CIDRs; nftables mode defaults to primary. */
function nodePortAddresses(raw: unknown, mode: string, where: string): string[] {
  const list =
    raw === undefined || raw === null || raw === ''
      ? []
      : Array.isArray(raw)
        ? raw.map(String)
        : commaList(String(raw));
  if (!list.length) return mode === 'nftables' ? ['primary'] : [];
  if (list.includes('primary') && list.length > 1)
    throw new Error(`${where}: "primary" cannot be used together with CIDRs`);
  for (const c of list)
    if (c !== 'primary' && !CIDR.test(c)) throw new Error(`${where}: must be a valid CIDR or "primary", got "${c}"`);
  return list;
}

export function loadProxyConfig(argv: string[], warn: (m: string) => void): ProxyConfig {
  const f = parseFlags(argv, PROXY_FLAGS);
  const file = f.get('config');
  const c = file ? readConfig(file, warn) : {};
  const mode = f.get('proxy-mode') ?? (typeof c.mode === 'string' && c.mode ? c.mode : 'iptables');
  if (mode !== 'iptables' && mode !== 'nftables')
    throw new Error(
      `${f.has('proxy-mode') ? '--proxy-mode' : `${file!}: mode`}: unsupported proxy mode "${mode}": this kube-proxy has iptables and nftables`,
    );
  // The mode's own section (iptables.* or nftables.*) holds its masquerade and sync settings.
  const ipt = ((mode === 'nftables' ? c.nftables : c.iptables) ?? {}) as Obj;
  const section = mode;
  const where = (flag: string, field: string): string => (f.has(flag) ? `--${flag}` : `${file!}: ${field}`);
  const typed = <T>(v: unknown, field: string, type: string, ok: (x: unknown) => x is T): T | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    if (!ok(v)) throw new Error(`${file!}: ${field}: must be ${type}, got ${JSON.stringify(v)}`);
    return v;
  };
  const isStr = (x: unknown): x is string => typeof x === 'string';
  const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
  const str = (flag: string, field: string, v: unknown, dflt: string): string =>
    f.get(flag) ?? typed(v, field, 'a string', isStr) ?? dflt;
  const bool = (flag: string, field: string, v: unknown, dflt: boolean): boolean =>
    f.has(flag) ? parseBool(f.get(flag)!, flag) : (typed(v, field, 'a boolean', isBool) ?? dflt);
  const dur = (flag: string, field: string, v: unknown, dflt: string): number => {
    const raw = str(flag, field, v, dflt);
    try {
      return parseDuration(raw);
    } catch (e) {
      throw new Error(`${where(flag, field)}: ${(e as Error).message}`, { cause: e });
    }
  };
  const bitRaw = f.has('iptables-masquerade-bit')
    ? Number(f.get('iptables-masquerade-bit'))
    : (typed(ipt.masqueradeBit, `${section}.masqueradeBit`, 'an integer', (x): x is number => typeof x === 'number') ??
      14);
  if (!Number.isInteger(bitRaw) || bitRaw < 0 || bitRaw > 31)
    throw new Error(
      `${where('iptables-masquerade-bit', `${section}.masqueradeBit`)}: must be between 0 and 31, got ${String(bitRaw)}`,
    );
  const kubeconfig = str(
    'kubeconfig',
    'clientConnection.kubeconfig',
    (c.clientConnection as Obj | undefined)?.kubeconfig,
    '',
  );
  if (!kubeconfig && !f.has('cleanup'))
    throw new Error('--kubeconfig is required: kube-proxy reads Services and EndpointSlices from the apiserver');
  const clusterCIDR = str('cluster-cidr', 'clusterCIDR', c.clusterCIDR, '');
  const detectMode = str('detect-local-mode', 'detectLocalMode', c.detectLocalMode, 'ClusterCIDR');
  if (!DETECT_LOCAL_MODES.includes(detectMode as DetectLocalMode))
    throw new Error(
      `${where('detect-local-mode', 'detectLocalMode')}: must be one of ${DETECT_LOCAL_MODES.join(', ')}, got "${detectMode}"`,
    );
  const dl = (c.detectLocal ?? {}) as Obj;
  const detectLocal: DetectLocal = {
    mode: detectMode as DetectLocalMode,
    clusterCIDR: clusterCIDR || undefined,
    bridgeInterface: str('pod-bridge-interface', 'detectLocal.bridgeInterface', dl.bridgeInterface, '') || undefined,
    interfaceNamePrefix:
      str('pod-interface-name-prefix', 'detectLocal.interfaceNamePrefix', dl.interfaceNamePrefix, '') || undefined,
  };
  if (detectLocal.mode === 'BridgeInterface' && !detectLocal.bridgeInterface)
    throw new Error(
      '--pod-bridge-interface (config: detectLocal.bridgeInterface): required with detectLocalMode BridgeInterface',
    );
  if (detectLocal.mode === 'InterfaceNamePrefix' && !detectLocal.interfaceNamePrefix)
    throw new Error(
      '--pod-interface-name-prefix (config: detectLocal.interfaceNamePrefix): required with detectLocalMode InterfaceNamePrefix',
    );
  const ct = (c.conntrack ?? {}) as Obj;
  const count = (flag: string, field: string, v: unknown, dflt: number): number => {
    const raw = f.has(flag)
      ? Number(f.get(flag))
      : (typed(v, field, 'an integer', (x): x is number => typeof x === 'number') ?? dflt);
    if (!Number.isInteger(raw) || raw < 0)
      throw new Error(`${where(flag, field)}: must be a non-negative integer, got ${String(f.get(flag) ?? v)}`);
    return raw;
  };
  const seconds = (flag: string, field: string, v: unknown, dflt: string): number =>
    Math.round(dur(flag, field, v, dflt) / 1000);
  const conntrack: ConntrackConfig = {
    maxPerCore: count('conntrack-max-per-core', 'conntrack.maxPerCore', ct.maxPerCore, CONNTRACK_DEFAULTS.maxPerCore),
    min: count('conntrack-min', 'conntrack.min', ct.min, CONNTRACK_DEFAULTS.min),
    tcpEstablishedTimeout: seconds(
      'conntrack-tcp-timeout-established',
      'conntrack.tcpEstablishedTimeout',
      ct.tcpEstablishedTimeout,
      '24h',
    ),
    tcpCloseWaitTimeout: seconds(
      'conntrack-tcp-timeout-close-wait',
      'conntrack.tcpCloseWaitTimeout',
      ct.tcpCloseWaitTimeout,
      '1h',
    ),
    tcpBeLiberal: bool('conntrack-tcp-be-liberal', 'conntrack.tcpBeLiberal', ct.tcpBeLiberal, false),
    udpTimeout: seconds('conntrack-udp-timeout', 'conntrack.udpTimeout', ct.udpTimeout, '0s'),
    udpStreamTimeout: seconds('conntrack-udp-timeout-stream', 'conntrack.udpStreamTimeout', ct.udpStreamTimeout, '0s'),
  };
  const bindAddress = str('bind-address', 'bindAddress', c.bindAddress, '0.0.0.0');
  if (!net.isIP(bindAddress))
    throw new Error(`${where('bind-address', 'bindAddress')}: must be a valid IP address, got "${bindAddress}"`);
  return {
    kubeconfig,
    detectLocal,
    conntrack,
    nodeName: str('hostname-override', 'hostnameOverride', c.hostnameOverride, os.hostname()).toLowerCase(),
    bindAddress,
    clusterCIDR,
    mode,
    cleanup: f.has('cleanup') ? parseBool(f.get('cleanup')!, 'cleanup') : false,
    nodePortAddresses: nodePortAddresses(
      f.get('nodeport-addresses') ?? c.nodePortAddresses,
      mode,
      where('nodeport-addresses', 'nodePortAddresses'),
    ),
    masqueradeAll: bool('masquerade-all', `${section}.masqueradeAll`, ipt.masqueradeAll, false),
    masqueradeBit: bitRaw,
    syncPeriodMs: dur('iptables-sync-period', `${section}.syncPeriod`, ipt.syncPeriod ?? c.syncPeriod, '30s'),
    minSyncPeriodMs: dur(
      'iptables-min-sync-period',
      `${section}.minSyncPeriod`,
      ipt.minSyncPeriod ?? c.minSyncPeriod,
      '1s',
    ),
    localhostNodePorts: bool(
      'iptables-localhost-nodeports',
      'iptables.localhostNodePorts',
      ipt.localhostNodePorts,
      true,
    ),
    healthzBindAddress: str('healthz-bind-address', 'healthzBindAddress', c.healthzBindAddress, '0.0.0.0:10256'),
    metricsBindAddress: str('metrics-bind-address', 'metricsBindAddress', c.metricsBindAddress, '127.0.0.1:10249'),
    verbosity: Number(f.get('v') ?? 0),
  };
}
