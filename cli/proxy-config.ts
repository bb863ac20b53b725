// kube-proxy flags and the supported subset of KubeProxyConfiguration
// (kubeproxy.config.k8s.io/v1alpha1). Flags win over the config file.
import fs from 'node:fs';
import os from 'node:os';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from './duration.js';
import { parseBool, parseFlags } from './flags.js';

export interface ProxyConfig {
  kubeconfig: string;
  nodeName: string;
  clusterCIDR: string;
  mode: 'iptables';
  masqueradeAll: boolean;
  masqueradeBit: number;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  localhostNodePorts: boolean;
  healthzBindAddress: string;
  metricsBindAddress: string;
  verbosity: number;
}

export const PROXY_FLAGS: Record<string, string> = {
  kubeconfig: 'kubeconfig of the apiserver (config: clientConnection.kubeconfig)',
  'hostname-override': 'node name, for local endpoints (config: hostnameOverride). Default: the hostname',
  'cluster-cidr': 'pod CIDR; traffic to cluster IPs from outside it is masqueraded (config: clusterCIDR)',
  'masquerade-all': 'SNAT all traffic sent to cluster IPs (config: iptables.masqueradeAll). Default false',
  'proxy-mode': 'iptables (config: mode). Default iptables',
  config: 'KubeProxyConfiguration YAML file',
  'iptables-sync-period': 'full resync interval (config: iptables.syncPeriod or syncPeriod). Default 30s',
  'iptables-min-sync-period': 'minimum time between syncs (config: iptables.minSyncPeriod or minSyncPeriod). Default 1s',
  'iptables-masquerade-bit': 'fwmark bit for packets to SNAT, 0-31 (config: iptables.masqueradeBit). Default 14',
  'iptables-localhost-nodeports': 'NodePorts on 127.0.0.1 (sets route_localnet) (config: iptables.localhostNodePorts). Default true',
  'healthz-bind-address': '/healthz and /livez (config: healthzBindAddress). Default 0.0.0.0:10256',
  'metrics-bind-address': '/metrics (config: metricsBindAddress). Default 127.0.0.1:10249',
  v: 'log verbosity (4 and up: debug)',
};

type Obj = Record<string, unknown>;
const TOP = new Set(['apiVersion', 'kind', 'clientConnection', 'hostnameOverride', 'clusterCIDR', 'mode', 'iptables', 'healthzBindAddress', 'metricsBindAddress', 'syncPeriod', 'minSyncPeriod']);
const IPTABLES = new Set(['masqueradeAll', 'masqueradeBit', 'syncPeriod', 'minSyncPeriod', 'localhostNodePorts']);
const CLIENT = new Set(['kubeconfig']);

function readConfig(file: string, warn: (m: string) => void): Obj {
  let doc: unknown;
  try {
    doc = parseYaml(fs.readFileSync(file, 'utf8'), { version: '1.1' });
  } catch (e) {
    throw new Error(`${file}: cannot read KubeProxyConfiguration: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${file}: expected a KubeProxyConfiguration object`);
  const o = doc as Obj;
  if (o.kind !== 'KubeProxyConfiguration') throw new Error(`${file}: kind: must be "KubeProxyConfiguration", got ${JSON.stringify(o.kind)}`);
  if (o.apiVersion !== 'kubeproxy.config.k8s.io/v1alpha1') throw new Error(`${file}: apiVersion: must be "kubeproxy.config.k8s.io/v1alpha1", got ${JSON.stringify(o.apiVersion)}`);
  const check = (obj: unknown, allowed: Set<string>, prefix: string): void => {
    if (obj === undefined || obj === null) return;
    if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${file}: ${prefix.slice(0, -1)}: must be an object`);
    for (const k of Object.keys(obj)) if (!allowed.has(k)) warn(`${file}: field ${prefix}${k} is not supported by this kube-proxy and is ignored`);
  };
  check(o, TOP, '');
  check(o.iptables, IPTABLES, 'iptables.');
  check(o.clientConnection, CLIENT, 'clientConnection.');
  return o;
}

export function loadProxyConfig(argv: string[], warn: (m: string) => void): ProxyConfig {
  const f = parseFlags(argv, PROXY_FLAGS);
  const file = f.get('config');
  const c = file ? readConfig(file, warn) : {};
  const ipt = (c.iptables ?? {}) as Obj;
  const where = (flag: string, field: string): string => (f.has(flag) ? `--${flag}` : `${file!}: ${field}`);
  const typed = <T>(v: unknown, field: string, type: string, ok: (x: unknown) => x is T): T | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    if (!ok(v)) throw new Error(`${file!}: ${field}: must be ${type}, got ${JSON.stringify(v)}`);
    return v;
  };
  const isStr = (x: unknown): x is string => typeof x === 'string';
  const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
  const str = (flag: string, field: string, v: unknown, dflt: string): string => f.get(flag) ?? typed(v, field, 'a string', isStr) ?? dflt;
  const bool = (flag: string, field: string, v: unknown, dflt: boolean): boolean => (f.has(flag) ? parseBool(f.get(flag)!, flag) : (typed(v, field, 'a boolean', isBool) ?? dflt));
  const dur = (flag: string, field: string, v: unknown, dflt: string): number => {
    const raw = str(flag, field, v, dflt);
    try {
      return parseDuration(raw);
    } catch (e) {
      throw new Error(`${where(flag, field)}: ${(e as Error).message}`);
    }
  };
  const mode = str('proxy-mode', 'mode', c.mode, 'iptables') || 'iptables';
  if (mode !== 'iptables') throw new Error(`${where('proxy-mode', 'mode')}: unsupported proxy mode "${mode}": this kube-proxy has iptables`);
  const bitRaw = f.has('iptables-masquerade-bit') ? Number(f.get('iptables-masquerade-bit')) : (typed(ipt.masqueradeBit, 'iptables.masqueradeBit', 'an integer', (x): x is number => typeof x === 'number') ?? 14);
  if (!Number.isInteger(bitRaw) || bitRaw < 0 || bitRaw > 31) throw new Error(`${where('iptables-masquerade-bit', 'iptables.masqueradeBit')}: must be between 0 and 31, got ${String(bitRaw)}`);
  const kubeconfig = str('kubeconfig', 'clientConnection.kubeconfig', (c.clientConnection as Obj | undefined)?.kubeconfig, '');
  if (!kubeconfig) throw new Error('--kubeconfig is required: kube-proxy reads Services and EndpointSlices from the apiserver');
  return {
    kubeconfig,
    nodeName: str('hostname-override', 'hostnameOverride', c.hostnameOverride, os.hostname()).toLowerCase(),
    clusterCIDR: str('cluster-cidr', 'clusterCIDR', c.clusterCIDR, ''),
    mode: 'iptables',
    masqueradeAll: bool('masquerade-all', 'iptables.masqueradeAll', ipt.masqueradeAll, false),
    masqueradeBit: bitRaw,
    syncPeriodMs: dur('iptables-sync-period', 'syncPeriod', ipt.syncPeriod ?? c.syncPeriod, '30s'),
    minSyncPeriodMs: dur('iptables-min-sync-period', 'minSyncPeriod', ipt.minSyncPeriod ?? c.minSyncPeriod, '1s'),
    localhostNodePorts: bool('iptables-localhost-nodeports', 'iptables.localhostNodePorts', ipt.localhostNodePorts, true),
    healthzBindAddress: str('healthz-bind-address', 'healthzBindAddress', c.healthzBindAddress, '0.0.0.0:10256'),
    metricsBindAddress: str('metrics-bind-address', 'metricsBindAddress', c.metricsBindAddress, '127.0.0.1:10249'),
    verbosity: Number(f.get('v') ?? 0),
  };
}
