// What the node's pod network should look like, from the Node list: the
// routes to other nodes' podCIDRs (host-gw), the CNI conflist for this node's
// podCIDR, and the masquerade/forward rules. Pure functions; network.ts applies them.
import type { KObj } from '../../kube/client.js';
import { cidrsOverlap } from '../../kube/cidr.js';

export type PodNetworkMode = 'host-gw' | 'vxlan' | 'none';
export const POD_NETWORK_MODES: PodNetworkMode[] = ['host-gw', 'vxlan', 'none'];

/** Routes we own carry this protocol number (ip route … proto 77), so nothing else in the table is touched. */
export const ROUTE_PROTO = 77;
export const CONFLIST_NAME = '10-tskube.conflist';
export const BRIDGE = 'tskube0';
export const NAT_CHAIN = 'TSKUBE-POSTRTG';
export const FORWARD_CHAIN = 'TSKUBE-FWD';

export interface NodeNet {
  name: string;
  podCIDR?: string;
  internalIP?: string;
}

export interface Route {
  dst: string;
  via: string;
}

/** The network facts of each Node: podCIDR (first of podCIDRs) and InternalIP. */
export function nodeNets(nodes: KObj[]): NodeNet[] {
  return nodes.map((n) => ({
    name: n.metadata.name,
    podCIDR: (n.spec?.podCIDRs?.[0] ?? n.spec?.podCIDR) as string | undefined,
    internalIP: ((n.status?.addresses ?? []) as { type: string; address: string }[]).find((a) => a.type === 'InternalIP' && /^\d+\.\d+\.\d+\.\d+$/.test(a.address))?.address,
  }));
}

/**
 * host-gw: one route per other node that has a podCIDR and an InternalIP. A node whose podCIDR
 * overlaps this node's own, or an earlier node's, gets none (a route there would steal local
 * traffic); `skipped` says why, for the log.
 */
export function desiredRoutes(nodes: NodeNet[], self: string): { routes: Route[]; skipped: string[] } {
  const own = nodes.find((n) => n.name === self)?.podCIDR;
  const routes: Route[] = [];
  const skipped: string[] = [];
  const taken: { cidr: string; node: string }[] = own ? [{ cidr: own, node: self }] : [];
  for (const n of [...nodes].sort((a, b) => a.name.localeCompare(b.name))) {
    if (n.name === self || !n.podCIDR) continue;
    if (!n.internalIP) {
      skipped.push(`node ${n.name} has podCIDR ${n.podCIDR} but no InternalIP yet`);
      continue;
    }
    const clash = taken.find((t) => cidrsOverlap(t.cidr, n.podCIDR!));
    if (clash) {
      skipped.push(`node ${n.name}'s podCIDR ${n.podCIDR} overlaps node ${clash.node}'s ${clash.cidr}; no route`);
      continue;
    }
    taken.push({ cidr: n.podCIDR, node: n.name });
    routes.push({ dst: n.podCIDR, via: n.internalIP });
  }
  return { routes, skipped };
}

/** The changes that turn `current` (our routes, by proto) into `desired`: replace new or moved ones, delete the rest. */
export function routeDiff(current: Route[], desired: Route[]): { replace: Route[]; remove: Route[] } {
  const cur = new Map(current.map((r) => [r.dst, r.via]));
  const want = new Set(desired.map((r) => r.dst));
  return {
    replace: desired.filter((r) => cur.get(r.dst) !== r.via),
    remove: current.filter((r) => !want.has(r.dst)),
  };
}

/** Our routes from `ip -j route show proto 77`. */
export function parseRoutes(json: string): Route[] {
  const rows = JSON.parse(json || '[]') as { dst: string; gateway?: string }[];
  return rows.filter((r) => r.gateway).map((r) => ({ dst: r.dst.includes('/') ? r.dst : `${r.dst}/32`, via: r.gateway! }));
}

/** The CNI conflist for this node's podCIDR: bridge with host-local IPAM, portmap, loopback. Masquerading is ours, not the bridge plugin's. */
export function podConflist(o: { podCIDR: string; ipamDir?: string; bridge?: string; ipMasq?: boolean }): string {
  const ipam: Record<string, unknown> = { type: 'host-local', ranges: [[{ subnet: o.podCIDR }]], routes: [{ dst: '0.0.0.0/0' }] };
  if (o.ipamDir) ipam.dataDir = o.ipamDir;
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'tskube',
      plugins: [
        { type: 'bridge', bridge: o.bridge ?? BRIDGE, isGateway: true, ipMasq: o.ipMasq ?? false, hairpinMode: true, ipam },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * iptables-restore input (--noflush) for this node: pods' traffic to any podCIDR keeps its
 * source; anything else leaving the node from a local pod is masqueraded (as flannel's
 * FLANNEL-POSTRTG). Forwarding to and from podCIDRs is accepted even under a DROP policy.
 */
export function networkRules(ownCIDR: string, allCIDRs: string[]): string {
  const cidrs = [...new Set([ownCIDR, ...allCIDRs])].sort();
  const nat = [
    '*nat',
    `:${NAT_CHAIN} - [0:0]`,
    // kube-proxy's marked packets get its own masquerade in KUBE-POSTROUTING.
    `-A ${NAT_CHAIN} -m mark --mark 0x4000/0x4000 -m comment --comment "kube-proxy masquerades these" -j RETURN`,
    ...cidrs.map((c) => `-A ${NAT_CHAIN} -s ${ownCIDR} -d ${c} -m comment --comment "pod to pod keeps its source" -j RETURN`),
    `-A ${NAT_CHAIN} -s ${ownCIDR} ! -d 224.0.0.0/4 -m comment --comment "pod egress leaves with the node address" -j MASQUERADE --random-fully`,
    'COMMIT',
  ];
  const filter = [
    '*filter',
    `:${FORWARD_CHAIN} - [0:0]`,
    ...cidrs.flatMap((c) => [`-A ${FORWARD_CHAIN} -s ${c} -m comment --comment "pod network" -j ACCEPT`, `-A ${FORWARD_CHAIN} -d ${c} -m comment --comment "pod network" -j ACCEPT`]),
    'COMMIT',
  ];
  return `${[...filter, ...nat].join('\n')}\n`;
}
