// kubelet flags and the supported subset of KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1). Flags win over the config file, as upstream.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';

import { parse as parseYaml } from 'yaml';

import {
  DEFAULT_EVICTION_HARD,
  EVICTION_SIGNALS,
  parseReserved,
  parseThreshold,
  type Threshold,
} from '../agent/cm/node-allocatable.js';
import { POD_NETWORK_MODES, type PodNetworkMode } from '../agent/network/plan.js';
import { checkAllowedUnsafe } from '../agent/pods/sysctls.js';
import type { KubeletApiConfig } from '../agent/server/start.js';
import { parseNodeIPs } from '../kube/node-ips.js';
import { parseQuantity } from '../kube/quantity.js';
import { formatBytes, formatMilliCpu } from '../kube/quantity.js';
import { parseDuration } from './duration.js';
import { parseBool, parseFlags } from './flags.js';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** KubeletApiConfig holds the kubelet API and log rotation fields. */
export interface AgentConfig extends KubeletApiConfig {
  cgroupDriver: 'cgroupfs' | 'systemd';
  cgroupsPerQOS: boolean;
  cgroupRoot: string;
  /** 'pods' or nothing. */
  enforceNodeAllocatable: string[];
  /** cpu in millicores, the rest in units. */
  kubeReserved: Record<string, number>;
  systemReserved: Record<string, number>;
  evictionHard: Record<string, Threshold>;
  evictionSoft: Record<string, { threshold: Threshold; gracePeriodMs: number }>;
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;
  /** 0: off. */
  imageMaximumGCAgeMs: number;
  evictionPressureTransitionPeriodMs: number;
  evictionMaxPodGracePeriod: number;
  podPidsLimit: number;
  nodeName: string;
  /** --node-ip's primary address ("" when unset). */
  nodeIP: string;
  /** --node-ip: one address, or a dual-stack pair (primary first); [] when unset. */
  nodeIPs: string[];
  staticPodPath: string;
  fileCheckFrequencyMs: number;
  staticPodURL: string;
  staticPodURLHeader: Record<string, string[]>;
  httpCheckFrequencyMs: number;
  containerRuntimeEndpoint: string;
  rootDir: string;
  podLogsDir: string;
  verbosity: number;
  kubeconfig?: string;
  /** --bootstrap-kubeconfig: credentials for TLS bootstrap when --kubeconfig is missing or expired. */
  bootstrapKubeconfig?: string;
  /** rotateCertificates: renew the client certificate before it expires. */
  rotateCertificates: boolean;
  /** serverTLSBootstrap: the serving certificate from a kubelet-serving CSR (config only, as upstream). */
  serverTLSBootstrap: boolean;
  registerNode: boolean;
  registerWithTaints: Taint[];
  nodeLabels: Record<string, string>;
  maxPods: number;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  metricsBindAddress: string;
  /** --pod-network: the agent's own pod network (host-gw, vxlan) or none (an installed CNI). */
  podNetwork: PodNetworkMode;
  cniConfDir: string;
  /** host-local IPAM state; the plugin's default when empty. */
  cniIpamDir: string;
  /** clusterDNS, clusterDomain, resolvConf ("": none): the pods' DNS settings. */
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
  /** Sysctls beyond the safe set pods may set (allowedUnsafeSysctls). */
  allowedUnsafeSysctls: string[];
}

export const AGENT_FLAGS: Record<string, string> = {
  'pod-manifest-path':
    'static pod manifest directory or file (config: staticPodPath). Default /etc/kubernetes/manifests',
  'file-check-frequency': 'rescan interval for the manifest path (config: fileCheckFrequency). Default 20s',
  'manifest-url': 'URL of static pod manifests, a Pod or a PodList (config: staticPodURL)',
  'manifest-url-header': 'HTTP headers for --manifest-url, "a:hello,b:again" (config: staticPodURLHeader)',
  'http-check-frequency': 'how often --manifest-url is fetched (config: httpCheckFrequency). Default 20s',
  'container-runtime-endpoint':
    'CRI socket (config: containerRuntimeEndpoint). Default unix:///run/containerd/containerd.sock',
  'hostname-override': 'node name to use instead of the hostname',
  'node-ip': 'IP address of the node (host IP of pods); an IPv4,IPv6 pair for a dual-stack node',
  'root-dir': 'kubelet state directory. Default /var/lib/kubelet',
  config: 'KubeletConfiguration YAML file',
  kubeconfig: 'kubeconfig of the apiserver to join; without it the kubelet runs standalone (static pods only)',
  'pod-infra-container-image':
    'deprecated upstream; accepted for kubeadm-flags.env (the sandbox image comes from the runtime)',
  'rotate-certificates':
    'renew the client certificate through a CSR before it expires (config: rotateCertificates). Default false',
  'bootstrap-kubeconfig':
    'kubeconfig (a bootstrap token) used to get a client certificate through a CSR when --kubeconfig is missing or its certificate expired; --kubeconfig is then written',
  'register-node': 'register the Node with the apiserver (config: registerNode). Default true',
  'register-with-taints': 'taints the Node registers with, "key=value:Effect,..." (config: registerWithTaints)',
  'node-labels': 'labels the Node registers with, "key=value,..."',
  'max-pods': 'pods this node can run (config: maxPods). Default 110',
  'node-status-update-frequency':
    'how often node status is computed, and posted if it changed (config: nodeStatusUpdateFrequency). Default 10s',
  'sync-frequency':
    'how often volume contents (ConfigMaps, Secrets, tokens) are refreshed (config: syncFrequency). Default 1m',
  'metrics-bind-address':
    'also serve /metrics and /metrics/probes over plain HTTP here, e.g. 127.0.0.1:10249 (off by default)',
  port: 'kubelet API port, HTTPS (config: port). Default 10250',
  address: 'kubelet API address (config: address). Default 0.0.0.0',
  'tls-cert-file': 'serving certificate of the kubelet API (config: tlsCertFile); default: self-signed in --cert-dir',
  'tls-private-key-file': 'its key (config: tlsPrivateKeyFile)',
  'cert-dir': 'where the self-signed serving certificate is kept. Default <root-dir>/pki',
  'client-ca-file':
    'CA bundle: client certificates it signed authenticate as CN (user) and O (groups) (config: authentication.x509.clientCAFile)',
  'anonymous-auth':
    'allow anonymous requests to the kubelet API (config: authentication.anonymous.enabled). Default false',
  'authentication-token-webhook':
    'check bearer tokens with TokenReview (config: authentication.webhook.enabled). Default true',
  'authentication-token-webhook-cache-ttl':
    'how long TokenReview answers are cached (config: authentication.webhook.cacheTTL). Default 2m',
  'authorization-mode': 'AlwaysAllow or Webhook (SubjectAccessReview) (config: authorization.mode). Default Webhook',
  'authorization-webhook-cache-authorized-ttl':
    'cache time of allowed answers (config: authorization.webhook.cacheAuthorizedTTL). Default 5m',
  'authorization-webhook-cache-unauthorized-ttl':
    'cache time of denied answers (config: authorization.webhook.cacheUnauthorizedTTL). Default 30s',
  'enable-debugging-handlers':
    'serve containerLogs, exec, attach, portForward and run (config: enableDebuggingHandlers). Default true',
  'container-log-max-size': 'rotate a container log above this size (config: containerLogMaxSize). Default 10Mi',
  'container-log-max-files':
    'log files kept per container, the current one included (config: containerLogMaxFiles). Default 5',
  'healthz-port': 'plain-HTTP /healthz port, 0 to disable (config: healthzPort). Default 10248',
  'healthz-bind-address': 'address of the healthz port (config: healthzBindAddress). Default 127.0.0.1',
  'pod-network':
    "host-gw: write the CNI config for the Node's spec.podCIDR and route to other nodes' podCIDRs; vxlan: the same over a VXLAN device; none: leave pod networking to an installed CNI. Default host-gw",
  'cni-conf-dir': "where the pod network writes its CNI conflist (containerd's conf_dir). Default /etc/cni/net.d",
  'cni-ipam-dir': "host-local IPAM state of the pod network. Default the plugin's (/var/lib/cni/networks)",
  'cluster-dns': 'comma-separated DNS server addresses for pods with dnsPolicy ClusterFirst (config: clusterDNS)',
  'cluster-domain':
    "the cluster's DNS domain, e.g. cluster.local: pods search <ns>.svc.<domain>, svc.<domain>, <domain> (config: clusterDomain)",
  'resolv-conf':
    'the resolver file pods with dnsPolicy Default copy, and whose search path ClusterFirst pods append; "" for none (config: resolvConf). Default /etc/resolv.conf',
  'cgroup-driver':
    "cgroupfs or systemd: how pod cgroups are named and made; must match the runtime's (config: cgroupDriver). Default cgroupfs",
  'cgroups-per-qos':
    'make the QoS cgroup hierarchy (kubepods, burstable, besteffort) and a cgroup per pod (config: cgroupsPerQOS). Default true',
  'cgroup-root': 'the cgroup under which kubepods is made (config: cgroupRoot). Default /',
  'enforce-node-allocatable':
    'comma-separated: pods (limit kubepods to allocatable) or none (config: enforceNodeAllocatable). Default pods',
  'kube-reserved':
    'resources kept back for the kubelet and runtime, e.g. cpu=100m,memory=256Mi,ephemeral-storage=1Gi (config: kubeReserved)',
  'system-reserved': 'resources kept back for the system, e.g. cpu=100m,memory=256Mi (config: systemReserved)',
  'eviction-hard': 'hard eviction thresholds, e.g. memory.available<100Mi,nodefs.available<10% (config: evictionHard)',
  'eviction-soft':
    'soft eviction thresholds, e.g. memory.available<300Mi (config: evictionSoft); each needs a grace period',
  'eviction-soft-grace-period':
    'how long each soft threshold must be met before pods are evicted, e.g. memory.available=1m30s (config: evictionSoftGracePeriod)',
  'eviction-pressure-transition-period':
    'how long a pressure condition stays after its threshold was last met (config: evictionPressureTransitionPeriod). Default 5m',
  'eviction-max-pod-grace-period':
    'the most grace a pod gets when evicted for a soft threshold (config: evictionMaxPodGracePeriod). Default 0',
  'image-gc-high-threshold':
    'image filesystem usage (percent) at which images are garbage-collected (config: imageGCHighThresholdPercent). Default 85',
  'image-gc-low-threshold':
    'image filesystem usage (percent) image garbage collection frees down to (config: imageGCLowThresholdPercent). Default 80',
  'minimum-image-ttl-duration':
    'the youngest an unused image may be to be garbage-collected (config: imageMinimumGCAge). Default 2m',
  'pod-max-pids': 'the most processes a pod may have; -1 for no limit (config: podPidsLimit). Default -1',
  'allowed-unsafe-sysctls':
    'comma-separated unsafe sysctls or prefixes (ending in *) pods may set beside the safe ones, e.g. net.core.*,kernel.msg* (config: allowedUnsafeSysctls)',
  v: 'log verbosity (4 and up: debug)',
};

/** KubeletConfiguration fields this kubelet reads; others get a warning. Documented in docs/kubelet-config.md. */
export const SUPPORTED_CONFIG_FIELDS = new Set([
  'apiVersion',
  'kind',
  'staticPodPath',
  'fileCheckFrequency',
  'staticPodURL',
  'staticPodURLHeader',
  'httpCheckFrequency',
  'containerRuntimeEndpoint',
  'podLogsDir',
  'registerNode',
  'registerWithTaints',
  'maxPods',
  'nodeStatusUpdateFrequency',
  'nodeStatusReportFrequency',
  'nodeLeaseDurationSeconds',
  'syncFrequency',
  'port',
  'address',
  'tlsCertFile',
  'tlsPrivateKeyFile',
  'authentication',
  'authorization',
  'enableDebuggingHandlers',
  'containerLogMaxSize',
  'containerLogMaxFiles',
  'containerLogMonitorInterval',
  'containerLogMaxWorkers',
  'healthzPort',
  'healthzBindAddress',
  'clusterDNS',
  'clusterDomain',
  'resolvConf',
  'allowedUnsafeSysctls',
  'cgroupDriver',
  'cgroupsPerQOS',
  'cgroupRoot',
  'enforceNodeAllocatable',
  'kubeReserved',
  'systemReserved',
  'evictionHard',
  'podPidsLimit',
  'shutdownGracePeriod',
  'shutdownGracePeriodCriticalPods',
  'imageGCHighThresholdPercent',
  'imageGCLowThresholdPercent',
  'imageMinimumGCAge',
  'imageMaximumGCAge',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'evictionPressureTransitionPeriod',
  'evictionMaxPodGracePeriod',
  'rotateCertificates',
  'serverTLSBootstrap',
]);

/** Nested fields read under authentication and authorization. */
const NESTED_FIELDS: Record<string, string[]> = {
  authentication: ['x509', 'webhook', 'anonymous'],
  'authentication.x509': ['clientCAFile'],
  'authentication.webhook': ['enabled', 'cacheTTL'],
  'authentication.anonymous': ['enabled'],
  authorization: ['mode', 'webhook'],
  'authorization.webhook': ['cacheAuthorizedTTL', 'cacheUnauthorizedTTL'],
};

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function parseTaintFlag(s: string): Taint[] {
  return s
    .split(',')
    .filter(Boolean)
    .map((t) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(\w+)$/.exec(t.trim());
      if (!m || !EFFECTS.includes(m[3]!))
        throw new Error(`--register-with-taints: invalid taint "${t}": want key[=value]:${EFFECTS.join('|')}`);
      return { key: m[1]!, ...(m[2] ? { value: m[2] } : {}), effect: m[3]! };
    });
}

function parseMapFlag(flag: string, s: string, sep: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const i = kv.indexOf(sep);
    if (i <= 0) throw new Error(`--${flag}: invalid entry "${kv}": want key${sep}value`);
    out[kv.slice(0, i).trim()] = kv.slice(i + 1).trim();
  }
  return out;
}

/** A dotted field path (authentication.x509.clientCAFile) in the config document. */
function lookup(doc: Record<string, unknown>, field: string): unknown {
  let v: unknown = doc;
  for (const k of field.split('.'))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

export function loadAgentConfig(argv: string[], warn: (m: string) => void): AgentConfig {
  const flags = parseFlags(argv, AGENT_FLAGS);
  if (flags.has('pod-infra-container-image'))
    warn(
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.',
    );
  let file: Record<string, unknown> = {};
  const cfgPath = flags.get('config');
  if (cfgPath) {
    let doc: unknown;
    try {
      doc = parseYaml(fs.readFileSync(cfgPath, 'utf8'), { version: '1.1' });
    } catch (e) {
      throw new Error(`${cfgPath}: cannot read KubeletConfiguration: ${(e as Error).message}`, { cause: e });
    }
    if (typeof doc !== 'object' || doc === null) throw new Error(`${cfgPath}: expected a KubeletConfiguration object`);
    file = doc as Record<string, unknown>;
    if (file.kind !== 'KubeletConfiguration')
      throw new Error(`${cfgPath}: kind: must be "KubeletConfiguration", got ${JSON.stringify(file.kind)}`);
    if (file.apiVersion !== 'kubelet.config.k8s.io/v1beta1')
      throw new Error(
        `${cfgPath}: apiVersion: must be "kubelet.config.k8s.io/v1beta1", got ${JSON.stringify(file.apiVersion)}`,
      );
    for (const k of Object.keys(file))
      if (!SUPPORTED_CONFIG_FIELDS.has(k))
        warn(`${cfgPath}: field ${k} is not supported by this kubelet and is ignored`);
    for (const [parent, known] of Object.entries(NESTED_FIELDS)) {
      const v = lookup(file, parent);
      if (typeof v !== 'object' || v === null) continue;
      for (const k of Object.keys(v))
        if (!known.includes(k))
          warn(`${cfgPath}: field ${parent}.${k} is not supported by this kubelet and is ignored`);
    }
  }
  const where = (flag: string | undefined, field: string): string =>
    flag && flags.has(flag) ? `--${flag}` : `${cfgPath!}: ${field}`;
  const fieldOf = <T>(field: string, type: string, check: (v: unknown) => v is T): T | undefined => {
    const v = lookup(file, field);
    if (v === undefined || v === null) return undefined;
    if (!check(v)) throw new Error(`${cfgPath!}: ${field}: must be ${type}, got ${JSON.stringify(v)}`);
    return v;
  };
  const isString = (v: unknown): v is string => typeof v === 'string';
  // Upstream's defaulting: in the config file, zero values ("", 0s, 0) mean "default", never "zero" (kubeadm writes
  // them). staticPodPath "" keeps its meaning (no static pods from a file).
  const str = (flag: string | undefined, field: string, dflt: string): string => {
    const f = flag ? flags.get(flag) : undefined;
    if (f !== undefined) return f;
    const v = fieldOf(field, 'a string', isString);
    return v === undefined || (v === '' && field !== 'staticPodPath') ? dflt : v;
  };
  const dur = (flag: string | undefined, field: string, dflt: string): number => {
    const raw = str(flag, field, dflt);
    try {
      const ms = parseDuration(raw);
      return ms === 0 && !(flag && flags.has(flag)) ? parseDuration(dflt) : ms;
    } catch (e) {
      throw new Error(`${where(flag, field)}: ${(e as Error).message}`, { cause: e });
    }
  };
  const int = (flag: string | undefined, field: string, dflt: number, min: number): number => {
    const fromFile = fieldOf(field, 'an integer', (v): v is number => typeof v === 'number');
    const raw =
      flag && flags.has(flag)
        ? Number(flags.get(flag))
        : fromFile === undefined || (fromFile === 0 && field !== 'healthzPort')
          ? dflt
          : fromFile;
    if (!Number.isInteger(raw) || raw < min)
      throw new Error(
        `${where(flag, field)}: must be an integer of at least ${min}, got ${flag && flags.has(flag) ? flags.get(flag)! : String(raw)}`,
      );
    return raw;
  };
  const bool = (flag: string, field: string, dflt: boolean): boolean => {
    const f = flags.get(flag);
    if (f !== undefined) return parseBool(f, flag);
    return fieldOf(field, 'a boolean', (v): v is boolean => typeof v === 'boolean') ?? dflt;
  };
  const headerField = fieldOf(
    'staticPodURLHeader',
    'a map of header names to lists of values',
    (v): v is Record<string, string[]> =>
      typeof v === 'object' &&
      !Array.isArray(v) &&
      Object.values(v as object).every((x) => Array.isArray(x) && x.every(isString)),
  );
  const headerFlag = flags.get('manifest-url-header');
  const taintField = fieldOf(
    'registerWithTaints',
    'a list of taints ({key, value, effect})',
    (v): v is Taint[] =>
      Array.isArray(v) &&
      v.every(
        (t) =>
          typeof t === 'object' && t !== null && isString((t as Taint).key) && EFFECTS.includes((t as Taint).effect),
      ),
  );
  const taintFlag = flags.get('register-with-taints');
  const leaseSec = int(undefined, 'nodeLeaseDurationSeconds', 40, 1);
  const rootDir = flags.get('root-dir') ?? '/var/lib/kubelet';
  const mode = str('authorization-mode', 'authorization.mode', 'Webhook');
  if (mode !== 'AlwaysAllow' && mode !== 'Webhook')
    throw new Error(
      `${where('authorization-mode', 'authorization.mode')}: must be AlwaysAllow or Webhook, got "${mode}"`,
    );
  const dnsFlag = flags.get('cluster-dns');
  const clusterDNS =
    dnsFlag !== undefined
      ? dnsFlag
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : (fieldOf('clusterDNS', 'a list of IP addresses', (v): v is string[] => Array.isArray(v) && v.every(isString)) ??
        []);
  for (const ip of clusterDNS)
    if (!net.isIP(ip))
      throw new Error(`${where('cluster-dns', 'clusterDNS')}: ${JSON.stringify(ip)} is not an IP address`);
  const unsafeFlag = flags.get('allowed-unsafe-sysctls');
  const allowedUnsafeSysctls =
    unsafeFlag !== undefined
      ? unsafeFlag
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : (fieldOf(
          'allowedUnsafeSysctls',
          'a list of strings',
          (v): v is string[] => Array.isArray(v) && v.every(isString),
        ) ?? []);
  try {
    checkAllowedUnsafe(allowedUnsafeSysctls);
  } catch (e) {
    throw new Error(
      `${where('allowed-unsafe-sysctls', 'allowedUnsafeSysctls')}: ${(e as Error).message.replace(/^allowedUnsafeSysctls: /, '')}`,
      { cause: e },
    );
  }
  const podNetwork = (flags.get('pod-network') ?? 'host-gw') as PodNetworkMode;
  if (!POD_NETWORK_MODES.includes(podNetwork))
    throw new Error(`--pod-network: must be one of ${POD_NETWORK_MODES.join(', ')}, got "${podNetwork}"`);
  const logMax = str('container-log-max-size', 'containerLogMaxSize', '10Mi');
  let containerLogMaxBytes: number;
  try {
    containerLogMaxBytes = parseQuantity(logMax);
  } catch (e) {
    throw new Error(`${where('container-log-max-size', 'containerLogMaxSize')}: ${(e as Error).message}`, { cause: e });
  }
  const cgroupDriver = str('cgroup-driver', 'cgroupDriver', 'cgroupfs');
  if (cgroupDriver !== 'cgroupfs' && cgroupDriver !== 'systemd')
    throw new Error(`${where('cgroup-driver', 'cgroupDriver')}: must be cgroupfs or systemd, got "${cgroupDriver}"`);
  const listOf = (flag: string, field: string): string[] | undefined => {
    const f = flags.get(flag);
    if (f !== undefined)
      return f
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    return fieldOf(field, 'a list of strings', (v): v is string[] => Array.isArray(v) && v.every(isString));
  };
  const enforceNodeAllocatable = listOf('enforce-node-allocatable', 'enforceNodeAllocatable') ?? ['pods'];
  for (const e of enforceNodeAllocatable) {
    // kube-reserved and system-reserved enforcement need their own cgroups (kubeReservedCgroup, systemReservedCgroup), which this kubelet does not manage.
    if (e !== 'pods' && e !== 'none')
      throw new Error(
        `${where('enforce-node-allocatable', 'enforceNodeAllocatable')}: "${e}" is not supported by this kubelet (supported: pods, none)`,
      );
  }
  if (enforceNodeAllocatable.includes('none') && enforceNodeAllocatable.length > 1)
    throw new Error(
      `${where('enforce-node-allocatable', 'enforceNodeAllocatable')}: none cannot be combined with other values`,
    );
  const mapOf = (flag: string, field: string, sep: string): Record<string, string> => {
    const f = flags.get(flag);
    if (f !== undefined) return parseMapFlag(flag, f, sep);
    return (
      fieldOf(
        field,
        'a map of strings',
        (v): v is Record<string, string> =>
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          Object.values(v).every((x) => typeof x === 'string'),
      ) ?? {}
    );
  };
  const reservedOf = (flag: string, field: string): Record<string, number> => {
    try {
      return parseReserved(where(flag, field), mapOf(flag, field, '='));
    } catch (e) {
      throw new Error((e as Error).message, { cause: e });
    }
  };
  const kubeReserved = reservedOf('kube-reserved', 'kubeReserved');
  const systemReserved = reservedOf('system-reserved', 'systemReserved');
  const hardRaw = flags.has('eviction-hard')
    ? parseMapFlag('eviction-hard', flags.get('eviction-hard')!, '<')
    : lookup(file, 'evictionHard') === undefined
      ? DEFAULT_EVICTION_HARD
      : mapOf('eviction-hard', 'evictionHard', '<');
  const evictionHard: Record<string, Threshold> = {};
  for (const [k, v] of Object.entries(hardRaw)) {
    if (!EVICTION_SIGNALS.includes(k))
      throw new Error(`${where('eviction-hard', 'evictionHard')}: unsupported eviction signal ${k}`);
    try {
      evictionHard[k] = parseThreshold(v);
    } catch (e) {
      throw new Error(`${where('eviction-hard', 'evictionHard')}[${k}]: ${(e as Error).message}`, { cause: e });
    }
  }
  const softRaw = flags.has('eviction-soft')
    ? parseMapFlag('eviction-soft', flags.get('eviction-soft')!, '<')
    : mapOf('eviction-soft', 'evictionSoft', '<');
  const softGraceRaw = mapOf('eviction-soft-grace-period', 'evictionSoftGracePeriod', '=');
  const evictionSoft: Record<string, { threshold: Threshold; gracePeriodMs: number }> = {};
  for (const [k, v] of Object.entries(softRaw)) {
    if (!EVICTION_SIGNALS.includes(k))
      throw new Error(`${where('eviction-soft', 'evictionSoft')}: unsupported eviction signal ${k}`);
    const grace = softGraceRaw[k];
    if (grace === undefined)
      throw new Error(
        `${where('eviction-soft-grace-period', 'evictionSoftGracePeriod')}: grace period must be specified for the soft eviction threshold ${k}`,
      );
    let threshold: Threshold;
    let gracePeriodMs: number;
    try {
      threshold = parseThreshold(v);
      gracePeriodMs = parseDuration(grace);
    } catch (e) {
      throw new Error(`${where('eviction-soft', 'evictionSoft')}[${k}]: ${(e as Error).message}`, { cause: e });
    }
    evictionSoft[k] = { threshold, gracePeriodMs };
  }
  const imageGCHighThresholdPercent = int('image-gc-high-threshold', 'imageGCHighThresholdPercent', 85, 0);
  const imageGCLowThresholdPercent = int('image-gc-low-threshold', 'imageGCLowThresholdPercent', 80, 0);
  if (imageGCHighThresholdPercent > 100)
    throw new Error(
      `invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) ${imageGCHighThresholdPercent} must be between 0 and 100, inclusive`,
    );
  if (imageGCLowThresholdPercent > 100)
    throw new Error(
      `invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) ${imageGCLowThresholdPercent} must be between 0 and 100, inclusive`,
    );
  if (imageGCLowThresholdPercent >= imageGCHighThresholdPercent)
    throw new Error(
      `invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) ${imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${imageGCHighThresholdPercent}`,
    );
  const imageMinimumGCAgeMs = dur('minimum-image-ttl-duration', 'imageMinimumGCAge', '2m');
  const imageMaximumGCAgeMs = (() => {
    const v = fieldOf('imageMaximumGCAge', 'a duration', isString);
    if (v === undefined || v === '') return 0;
    try {
      return parseDuration(v);
    } catch (e) {
      throw new Error(`${cfgPath!}: imageMaximumGCAge: ${(e as Error).message}`, { cause: e });
    }
  })();
  if (imageMaximumGCAgeMs && imageMaximumGCAgeMs <= imageMinimumGCAgeMs)
    throw new Error(
      `invalid configuration: imageMaximumGCAge ${imageMaximumGCAgeMs / 1000}s must be greater than imageMinimumGCAge ${imageMinimumGCAgeMs / 1000}s`,
    );
  const durField = (field: string): number => {
    const v = fieldOf(field, 'a duration', isString);
    if (v === undefined || v === '') return 0;
    try {
      return parseDuration(v);
    } catch (e) {
      throw new Error(`${cfgPath!}: ${field}: ${(e as Error).message}`, { cause: e });
    }
  };
  const shutdownGracePeriodMs = durField('shutdownGracePeriod');
  const shutdownGracePeriodCriticalPodsMs = durField('shutdownGracePeriodCriticalPods');
  if (shutdownGracePeriodCriticalPodsMs > shutdownGracePeriodMs)
    throw new Error(
      `invalid configuration: shutdownGracePeriodCriticalPods (${shutdownGracePeriodCriticalPodsMs / 1000}s) must be <= shutdownGracePeriod (${shutdownGracePeriodMs / 1000}s)`,
    );
  const nodeIPs = parseNodeIPs(flags.get('node-ip') ?? '');
  return {
    shutdownGracePeriodMs,
    shutdownGracePeriodCriticalPodsMs,
    imageGCHighThresholdPercent,
    imageGCLowThresholdPercent,
    imageMinimumGCAgeMs,
    imageMaximumGCAgeMs,
    evictionSoft,
    evictionPressureTransitionPeriodMs: dur(
      'eviction-pressure-transition-period',
      'evictionPressureTransitionPeriod',
      '5m',
    ),
    evictionMaxPodGracePeriod: int('eviction-max-pod-grace-period', 'evictionMaxPodGracePeriod', 0, 0),
    cgroupDriver,
    cgroupsPerQOS: bool('cgroups-per-qos', 'cgroupsPerQOS', true),
    cgroupRoot: str('cgroup-root', 'cgroupRoot', '/'),
    enforceNodeAllocatable: enforceNodeAllocatable.filter((e) => e !== 'none'),
    kubeReserved,
    systemReserved,
    evictionHard,
    podPidsLimit: int('pod-max-pids', 'podPidsLimit', -1, -1),
    nodeName: (flags.get('hostname-override') ?? os.hostname()).toLowerCase(),
    nodeIP: nodeIPs[0] ?? '',
    nodeIPs,
    staticPodPath: str('pod-manifest-path', 'staticPodPath', '/etc/kubernetes/manifests'),
    fileCheckFrequencyMs: dur('file-check-frequency', 'fileCheckFrequency', '20s'),
    staticPodURL: str('manifest-url', 'staticPodURL', ''),
    staticPodURLHeader:
      headerFlag !== undefined
        ? Object.fromEntries(
            Object.entries(parseMapFlag('manifest-url-header', headerFlag, ':')).map(([k, v]) => [k, [v]]),
          )
        : (headerField ?? {}),
    httpCheckFrequencyMs: dur('http-check-frequency', 'httpCheckFrequency', '20s'),
    containerRuntimeEndpoint: str(
      'container-runtime-endpoint',
      'containerRuntimeEndpoint',
      'unix:///run/containerd/containerd.sock',
    ),
    rootDir,
    podLogsDir: str(undefined, 'podLogsDir', '/var/log/pods'),
    verbosity: Number(flags.get('v') ?? 0),
    kubeconfig: flags.get('kubeconfig'),
    bootstrapKubeconfig: flags.get('bootstrap-kubeconfig'),
    rotateCertificates: bool('rotate-certificates', 'rotateCertificates', false),
    serverTLSBootstrap:
      fieldOf('serverTLSBootstrap', 'a boolean', (v): v is boolean => typeof v === 'boolean') ?? false,
    registerNode: bool('register-node', 'registerNode', true),
    registerWithTaints: taintFlag !== undefined ? parseTaintFlag(taintFlag) : (taintField ?? []),
    nodeLabels: parseMapFlag('node-labels', flags.get('node-labels') ?? '', '='),
    maxPods: int('max-pods', 'maxPods', 110, 1),
    nodeStatusUpdateFrequencyMs: dur('node-status-update-frequency', 'nodeStatusUpdateFrequency', '10s'),
    nodeStatusReportFrequencyMs: dur(undefined, 'nodeStatusReportFrequency', '5m'),
    nodeLeaseDurationSeconds: leaseSec,
    metricsBindAddress: flags.get('metrics-bind-address') ?? '',
    podNetwork,
    cniConfDir: flags.get('cni-conf-dir') ?? '/etc/cni/net.d',
    cniIpamDir: flags.get('cni-ipam-dir') ?? '',
    syncFrequencyMs: dur('sync-frequency', 'syncFrequency', '1m'),
    port: int('port', 'port', 10250, 0),
    address: str('address', 'address', '0.0.0.0'),
    tlsCertFile: str('tls-cert-file', 'tlsCertFile', ''),
    tlsPrivateKeyFile: str('tls-private-key-file', 'tlsPrivateKeyFile', ''),
    certDir: flags.get('cert-dir') ?? `${rootDir}/pki`,
    clientCAFile: str('client-ca-file', 'authentication.x509.clientCAFile', ''),
    anonymousAuth: bool('anonymous-auth', 'authentication.anonymous.enabled', false),
    webhookAuthn: bool('authentication-token-webhook', 'authentication.webhook.enabled', true),
    webhookAuthnCacheTtlMs: dur('authentication-token-webhook-cache-ttl', 'authentication.webhook.cacheTTL', '2m'),
    authorizationMode: mode,
    authorizedTtlMs: dur(
      'authorization-webhook-cache-authorized-ttl',
      'authorization.webhook.cacheAuthorizedTTL',
      '5m',
    ),
    unauthorizedTtlMs: dur(
      'authorization-webhook-cache-unauthorized-ttl',
      'authorization.webhook.cacheUnauthorizedTTL',
      '30s',
    ),
    enableDebuggingHandlers: bool('enable-debugging-handlers', 'enableDebuggingHandlers', true),
    containerLogMaxBytes,
    containerLogMaxFiles: int('container-log-max-files', 'containerLogMaxFiles', 5, 2),
    containerLogMonitorIntervalMs: dur(undefined, 'containerLogMonitorInterval', '10s'),
    containerLogMaxWorkers: int(undefined, 'containerLogMaxWorkers', 1, 1),
    healthzPort: int('healthz-port', 'healthzPort', 10248, 0),
    healthzBindAddress: str('healthz-bind-address', 'healthzBindAddress', '127.0.0.1'),
    clusterDNS,
    clusterDomain: str('cluster-domain', 'clusterDomain', '').replace(/\.$/, ''),
    // Unlike other strings, resolvConf "" is meaningful (no resolver file), so only an absent field means the default.
    resolvConf: flags.get('resolv-conf') ?? fieldOf('resolvConf', 'a string', isString) ?? '/etc/resolv.conf',
    allowedUnsafeSysctls,
  };
}

const dur = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000}m0s` : `${ms / 1000}s`);

/** The effective configuration in KubeletConfiguration terms, for /configz. */
export function kubeletConfigz(c: AgentConfig): object {
  return {
    kind: 'KubeletConfiguration',
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    staticPodPath: c.staticPodPath,
    fileCheckFrequency: dur(c.fileCheckFrequencyMs),
    staticPodURL: c.staticPodURL || undefined,
    httpCheckFrequency: dur(c.httpCheckFrequencyMs),
    containerRuntimeEndpoint: c.containerRuntimeEndpoint,
    podLogsDir: c.podLogsDir,
    registerNode: c.registerNode,
    registerWithTaints: c.registerWithTaints,
    maxPods: c.maxPods,
    nodeStatusUpdateFrequency: dur(c.nodeStatusUpdateFrequencyMs),
    nodeStatusReportFrequency: dur(c.nodeStatusReportFrequencyMs),
    nodeLeaseDurationSeconds: c.nodeLeaseDurationSeconds,
    syncFrequency: dur(c.syncFrequencyMs),
    address: c.address,
    port: c.port,
    tlsCertFile: c.tlsCertFile || undefined,
    tlsPrivateKeyFile: c.tlsPrivateKeyFile || undefined,
    authentication: {
      x509: { clientCAFile: c.clientCAFile || undefined },
      webhook: { enabled: c.webhookAuthn, cacheTTL: dur(c.webhookAuthnCacheTtlMs) },
      anonymous: { enabled: c.anonymousAuth },
    },
    authorization: {
      mode: c.authorizationMode,
      webhook: { cacheAuthorizedTTL: dur(c.authorizedTtlMs), cacheUnauthorizedTTL: dur(c.unauthorizedTtlMs) },
    },
    enableDebuggingHandlers: c.enableDebuggingHandlers,
    containerLogMaxSize: String(c.containerLogMaxBytes),
    containerLogMaxFiles: c.containerLogMaxFiles,
    containerLogMonitorInterval: dur(c.containerLogMonitorIntervalMs),
    containerLogMaxWorkers: c.containerLogMaxWorkers,
    healthzPort: c.healthzPort,
    healthzBindAddress: c.healthzBindAddress,
    clusterDNS: c.clusterDNS.length ? c.clusterDNS : undefined,
    clusterDomain: c.clusterDomain || undefined,
    resolvConf: c.resolvConf,
    allowedUnsafeSysctls: c.allowedUnsafeSysctls.length ? c.allowedUnsafeSysctls : undefined,
    cgroupDriver: c.cgroupDriver,
    cgroupsPerQOS: c.cgroupsPerQOS,
    cgroupRoot: c.cgroupRoot,
    enforceNodeAllocatable: c.enforceNodeAllocatable.length ? c.enforceNodeAllocatable : ['none'],
    kubeReserved: reservedMap(c.kubeReserved),
    systemReserved: reservedMap(c.systemReserved),
    evictionHard: Object.fromEntries(
      Object.entries(c.evictionHard).map(([k, t]) => [
        k,
        'quantity' in t ? formatBytes(t.quantity) : `${Math.round(t.percentage * 100)}%`,
      ]),
    ),
    podPidsLimit: c.podPidsLimit,
    evictionPressureTransitionPeriod: dur(c.evictionPressureTransitionPeriodMs),
    evictionMaxPodGracePeriod: c.evictionMaxPodGracePeriod,
    imageGCHighThresholdPercent: c.imageGCHighThresholdPercent,
    imageGCLowThresholdPercent: c.imageGCLowThresholdPercent,
    imageMinimumGCAge: dur(c.imageMinimumGCAgeMs),
    imageMaximumGCAge: dur(c.imageMaximumGCAgeMs),
    shutdownGracePeriod: dur(c.shutdownGracePeriodMs),
    shutdownGracePeriodCriticalPods: dur(c.shutdownGracePeriodCriticalPodsMs),
  };
}

const reservedMap = (m: Record<string, number>): Record<string, string> | undefined =>
  Object.keys(m).length
    ? Object.fromEntries(
        Object.entries(m).map(([k, v]) => [
          k,
          k === 'cpu' ? formatMilliCpu(v) : k === 'pid' ? String(v) : formatBytes(v),
        ]),
      )
    : undefined;
