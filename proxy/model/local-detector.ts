// Upstream's local traffic detector (--detect-local-mode): which packets come
// from pods on this node or cluster, as the iptables and nftables matches the
// rules use to masquerade off-cluster traffic and to short-circuit pod traffic
// to external destinations. Without one, neither rule is written.
export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';
export const DETECT_LOCAL_MODES: DetectLocalMode[] = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix'];

export interface DetectLocal {
  mode: DetectLocalMode;
  clusterCIDR?: string;
  bridgeInterface?: string;
  interfaceNamePrefix?: string;
}

export interface LocalDetector {
  iptables: { local: string[]; notLocal: string[] };
  nftables: { local: string; notLocal: string };
}

const cidr = (c: string): LocalDetector => ({ iptables: { local: ['-s', c], notLocal: ['!', '-s', c] }, nftables: { local: `ip saddr ${c}`, notLocal: `ip saddr != ${c}` } });
const iface = (ipt: string, nft: string): LocalDetector => ({ iptables: { local: ['-i', ipt], notLocal: ['!', '-i', ipt] }, nftables: { local: `iifname ${JSON.stringify(nft)}`, notLocal: `iifname != ${JSON.stringify(nft)}` } });

/** The detector for a mode; NodeCIDR needs the Node's spec.podCIDR, and is undefined until it has one. */
export function localDetector(d: DetectLocal, nodeCIDR?: string): LocalDetector | undefined {
  switch (d.mode) {
    case 'ClusterCIDR':
      return d.clusterCIDR ? cidr(d.clusterCIDR) : undefined;
    case 'NodeCIDR':
      return nodeCIDR ? cidr(nodeCIDR) : undefined;
    case 'BridgeInterface':
      return d.bridgeInterface ? iface(d.bridgeInterface, d.bridgeInterface) : undefined;
    case 'InterfaceNamePrefix':
      return d.interfaceNamePrefix ? iface(`${d.interfaceNamePrefix}+`, `${d.interfaceNamePrefix}*`) : undefined;
  }
}
