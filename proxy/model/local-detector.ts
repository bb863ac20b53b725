// Upstream's local traffic detector (--detect-local-mode): which packets come
// from pods on this node or cluster, as the iptables and nftables matches the
// rules use to masquerade off-cluster traffic and to short-circuit pod traffic
// to external destinations. Without one, neither rule is written.
import { cidrFamily, type IPFamily, ofFamily } from './family.js';

export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';
export const DETECT_LOCAL_MODES: DetectLocalMode[] = [
  'ClusterCIDR',
  'NodeCIDR',
  'BridgeInterface',
  'InterfaceNamePrefix',
];

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

const cidr = (c: string): LocalDetector => {
  const ip = cidrFamily(c) === 'IPv6' ? 'ip6' : 'ip';
  return {
    iptables: { local: ['-s', c], notLocal: ['!', '-s', c] },
    nftables: { local: `${ip} saddr ${c}`, notLocal: `${ip} saddr != ${c}` },
  };
};
const iface = (ipt: string, nft: string): LocalDetector => ({
  iptables: { local: ['-i', ipt], notLocal: ['!', '-i', ipt] },
  nftables: { local: `iifname ${JSON.stringify(nft)}`, notLocal: `iifname != ${JSON.stringify(nft)}` },
});

/**
 * The detector of one family for a mode; NodeCIDR needs the Node's pod CIDR of that family, and is undefined until it
 * has one. A dual-stack --cluster-cidr ("10.244.0.0/16,fd00:10:244::/56") gives each family its own CIDR.
 */
export function localDetector(d: DetectLocal, nodeCIDR?: string, family: IPFamily = 'IPv4'): LocalDetector | undefined {
  switch (d.mode) {
    case 'ClusterCIDR': {
      const c = ofFamily(d.clusterCIDR, family)[0];
      return c ? cidr(c) : undefined;
    }
    case 'NodeCIDR': {
      const c = ofFamily(nodeCIDR, family)[0];
      return c ? cidr(c) : undefined;
    }
    case 'BridgeInterface':
      return d.bridgeInterface ? iface(d.bridgeInterface, d.bridgeInterface) : undefined;
    case 'InterfaceNamePrefix':
      return d.interfaceNamePrefix ? iface(`${d.interfaceNamePrefix}+`, `${d.interfaceNamePrefix}*`) : undefined;
  }
}
