// The kube-proxy's configuration: what KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) and the flags
// set, as upstream keeps it in pkg/proxy/apis/config. cli/proxy-config.ts parses them into it.
import type { ConntrackConfig } from './conntrack-sysctls.js';
import type { DetectLocal } from './model/local-detector.js';

export interface ProxyConfig {
  kubeconfig: string;
  nodeName: string;
  /** --bind-address: the node's IP as the proxy sees it (and so the primary family); 0.0.0.0 or :: for the Node's. */
  bindAddress: string;
  clusterCIDR: string;
  mode: 'iptables' | 'nftables';
  /** --cleanup: remove both modes' rules and exit. */
  cleanup: boolean;
  /** --detect-local-mode and its settings. */
  detectLocal: DetectLocal;
  /** conntrack sysctls (conntrack.*, --conntrack-*). */
  conntrack: ConntrackConfig;
  /** --nodeport-addresses: CIDRs, or ["primary"] for the node's IP; [] for every local address. */
  nodePortAddresses: string[];
  masqueradeAll: boolean;
  masqueradeBit: number;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  localhostNodePorts: boolean;
  healthzBindAddress: string;
  metricsBindAddress: string;
  verbosity: number;
}
