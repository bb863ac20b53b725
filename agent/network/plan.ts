// What the node's pod network should look like, from the Node list: the
// routes to other nodes' podCIDRs (host-gw), the CNI conflist for this node's
// podCIDR, and the masquerade/forward rules. Pure functions; network.ts applies them.
import {
  anyCidrsOverlap,
  bigIntToIp,
  familyOfText,
  type IPFamily,
  ipInAnyCidr,
  ipToBigInt,
  parseAnyCidr,
} from '../../kube/cidr.js';
import type { KObj } from '../../kube/client.js';

export type PodNetworkMode = 'host-gw' | 'vxlan' | 'none';
export const POD_NETWORK_MODES: PodNetworkMode[] = ['host-gw', 'vxlan', 'none'];

/** Routes we own carry this protocol number (ip route … proto 77), so nothing else in the table is touched. */
export const ROUTE_PROTO = 77;
export const CONFLIST_NAME = '10-tskube.conflist';
/** The conflist's network name (host-local keeps its leases in /var/lib/cni/networks/<name>). */
export const CNI_NETWORK = 'tskube';
export const BRIDGE = 'tskube0';
export const NAT_CHAIN = 'TSKUBE-POSTRTG';
export const FORWARD_CHAIN = 'TSKUBE-FWD';

/** flannel's vxlan backend: device, VNI, UDP port, and the Node annotations it publishes (same names, so tools know them). */
export const VXLAN_DEV = 'flannel.1';
export const VXLAN_VNI = 1;
export const VXLAN_PORT = 8472;
export const ANN_BACKEND_TYPE = 'flannel.alpha.coreos.com/backend-type';
export const ANN_BACKEND_DATA = 'flannel.alpha.coreos.com/backend-data';
export const ANN_PUBLIC_IP = 'flannel.alpha.coreos.com/public-ip';
/** flannel's IPv6 VXLAN (dual stack): its own device over the IPv6 underlay, and annotations of its own. */
export const VXLAN_DEV6 = 'flannel-v6.1';
export const ANN_BACKEND_V6_DATA = 'flannel.alpha.coreos.com/backend-v6-data';
export const ANN_PUBLIC_IPV6 = 'flannel.alpha.coreos.com/public-ipv6';

/**
 * Per family: the VXLAN device, the Node annotations its VTEP is published in, the encapsulation's overhead (outer IP
 * header, UDP, VXLAN, inner Ethernet: 50 bytes over IPv4, 70 over IPv6) and the VTEP address's prefix length.
 */
export const VXLAN_FAMILY: Record<
  IPFamily,
  { dev: string; data: string; publicIP: string; overhead: number; hostBits: number }
> = {
  IPv4: { dev: VXLAN_DEV, data: ANN_BACKEND_DATA, publicIP: ANN_PUBLIC_IP, overhead: 50, hostBits: 32 },
  IPv6: { dev: VXLAN_DEV6, data: ANN_BACKEND_V6_DATA, publicIP: ANN_PUBLIC_IPV6, overhead: 70, hostBits: 128 },
};

export interface NodeNet {
  name: string;
  /** The IPv4 podCIDR and InternalIP. */
  podCIDR?: string;
  internalIP?: string;
  /** The IPv6 ones (dual stack, or an IPv6-only cluster). */
  podCIDR6?: string;
  internalIP6?: string;
  /** The VTEP MAC its vxlan backend published (and its IPv6 device's). */
  vtepMAC?: string;
  vtepMAC6?: string;
}

export interface Route {
  dst: string;
  via: string;
  /** vxlan: out of the VXLAN device, the gateway taken as on-link. */
  dev?: string;
}

/** vxlan: the remote VTEP's MAC for the gateway address (neighbour entry) and where that MAC lives (FDB entry). */
export interface VxlanPeer {
  gateway: string;
  mac: string;
  nodeIP: string;
}

/** The network facts of each Node: its podCIDR and InternalIP of each family (the first of each, as upstream lists them). */
export function nodeNets(nodes: KObj[]): NodeNet[] {
  return nodes.map((n) => {
    const cidrs = ((n.spec?.podCIDRs as string[] | undefined) ?? [n.spec?.podCIDR as string | undefined]).filter(
      (c): c is string => !!c,
    );
    const ips = ((n.status?.addresses ?? []) as { type: string; address: string }[])
      .filter((a) => a.type === 'InternalIP')
      .map((a) => a.address);
    const net: NodeNet = {
      name: n.metadata.name,
      podCIDR: cidrs.find((c) => !c.includes(':')),
      vtepMAC: vtepMacOf(n.metadata?.annotations?.[ANN_BACKEND_DATA]),
      internalIP: ips.find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)),
    };
    // Only present when set, so a single-stack Node's facts (compared as JSON for changes) stay as they were.
    const cidr6 = cidrs.find((c) => c.includes(':'));
    const ip6 = ips.find((a) => a.includes(':'));
    const mac6 = vtepMacOf(n.metadata?.annotations?.[ANN_BACKEND_V6_DATA]);
    if (cidr6) net.podCIDR6 = cidr6;
    if (ip6) net.internalIP6 = ip6;
    if (mac6) net.vtepMAC6 = mac6;
    return net;
  });
}

/** A node's podCIDR and InternalIP of one family. */
export function familyNet(n: NodeNet, family: IPFamily): { podCIDR?: string; internalIP?: string; vtepMAC?: string } {
  return family === 'IPv4'
    ? { podCIDR: n.podCIDR, internalIP: n.internalIP, vtepMAC: n.vtepMAC }
    : { podCIDR: n.podCIDR6, internalIP: n.internalIP6, vtepMAC: n.vtepMAC6 };
}

function vtepMacOf(data: string | undefined): string | undefined {
  if (!data) return undefined;
  try {
    const mac = (JSON.parse(data) as { VtepMAC?: unknown }).VtepMAC;
    return typeof mac === 'string' && /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(mac) ? mac.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** The network address of a CIDR (10.244.1.0/24 -> 10.244.1.0): flannel's per-node VTEP address and gateway. */
export const networkAddress = (cidr: string): string => cidr.split('/')[0]!;

/** The Node annotations the vxlan backend publishes for a family (flannel's names and backend-data format). */
export function vxlanAnnotations(mac: string, nodeIP: string, family: IPFamily = 'IPv4'): Record<string, string> {
  const f = VXLAN_FAMILY[family];
  return {
    [ANN_BACKEND_TYPE]: 'vxlan',
    [f.data]: JSON.stringify({ VNI: VXLAN_VNI, VtepMAC: mac }),
    [f.publicIP]: nodeIP,
  };
}

/**
 * vxlan: per other node with a podCIDR, an InternalIP and a published VTEP MAC of `family`, a route to its podCIDR
 * via its network address on that family's VXLAN device, a neighbour entry (that address -> its MAC) and an FDB
 * entry (MAC -> its IP).
 */
export function desiredVxlan(
  nodes: NodeNet[],
  self: string,
  family: IPFamily = 'IPv4',
  ownIPs: string[] = [],
): { routes: Route[]; peers: VxlanPeer[]; skipped: string[] } {
  const { routes, skipped } = desiredRoutes(nodes, self, family, ownIPs);
  const byCidr = new Map(nodes.map((n) => [familyNet(n, family).podCIDR, n]));
  const out: Route[] = [];
  const peers: VxlanPeer[] = [];
  const { dev, data } = VXLAN_FAMILY[family];
  for (const r of routes) {
    const n = byCidr.get(r.dst)!;
    const mac = familyNet(n, family).vtepMAC;
    if (!mac) {
      skipped.push(`node ${n.name} has published no VTEP MAC (${data}) yet`);
      continue;
    }
    const gateway = networkAddress(r.dst);
    out.push({ dst: r.dst, via: gateway, dev });
    peers.push({ gateway, mac, nodeIP: r.via });
  }
  return { routes: out, peers, skipped };
}

/** Which neighbour and FDB entries to set and to remove on the VXLAN device. */
export function peerDiff(
  current: { neigh: { ip: string; mac: string }[]; fdb: { mac: string; dst: string }[] },
  peers: VxlanPeer[],
) {
  const neighNow = new Map(current.neigh.map((n) => [n.ip, n.mac]));
  const fdbNow = new Map(current.fdb.map((f) => [f.mac, f.dst]));
  const wantNeigh = new Set(peers.map((p) => p.gateway));
  const wantFdb = new Set(peers.map((p) => p.mac));
  return {
    setNeigh: peers.filter((p) => neighNow.get(p.gateway) !== p.mac),
    delNeigh: current.neigh.filter((n) => !wantNeigh.has(n.ip)),
    setFdb: peers.filter((p) => fdbNow.get(p.mac) !== p.nodeIP),
    delFdb: current.fdb.filter((f) => !wantFdb.has(f.mac)),
  };
}

/**
 * host-gw: one route per other node that has a podCIDR and an InternalIP of `family`. A node whose podCIDR
 * overlaps this node's own, or an earlier node's, or covers a node's address (this node's `ownIPs` or any node's
 * InternalIP), gets none (a route there would steal local traffic or cut nodes off); `skipped` says why, for the log.
 */
export function desiredRoutes(
  nodes: NodeNet[],
  self: string,
  family: IPFamily = 'IPv4',
  ownIPs: string[] = [],
): { routes: Route[]; skipped: string[] } {
  const own = familyNet(nodes.find((n) => n.name === self) ?? { name: self }, family).podCIDR;
  const routes: Route[] = [];
  const skipped: string[] = [];
  // Ranges taken so far, sorted by start: an overlap check is a binary search, not a scan (1,000s of nodes).
  const taken: { lo: bigint; hi: bigint; cidr: string; node: string }[] = [];
  const range = (cidr: string): { lo: bigint; hi: bigint } | undefined => {
    try {
      const { v6, base, size } = parseAnyCidr(cidr);
      return v6 === (family === 'IPv6') ? { lo: base, hi: base + size - 1n } : undefined;
    } catch {
      return undefined;
    }
  };
  /** Where r goes in `taken` (kept sorted by start), and the range it overlaps: only its neighbours can. */
  const place = (r: { lo: bigint; hi: bigint }) => {
    let a = 0;
    let b = taken.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if (taken[m]!.lo <= r.lo) a = m + 1;
      else b = m;
    }
    return { at: a, clash: [taken[a - 1], taken[a]].find((t) => t && t.lo <= r.hi && r.lo <= t.hi) };
  };
  const addresses = [
    ...ownIPs.map((ip) => ({ ip, node: self })),
    ...nodes.flatMap((n) =>
      familyNet(n, family).internalIP ? [{ ip: familyNet(n, family).internalIP!, node: n.name }] : [],
    ),
  ]
    .filter((a) => (family === 'IPv6') === a.ip.includes(':'))
    .map((a) => ({ ...a, n: ipToBigInt(a.ip) }));
  const ownRange = own ? range(own) : undefined;
  if (own && ownRange) taken.push({ ...ownRange, cidr: own, node: self });
  // Code-unit order, not localeCompare: the same on every node whatever its locale, and ICU's collation data would
  // stay in the kubelet's RSS once touched.
  for (const n of [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const { podCIDR, internalIP } = familyNet(n, family);
    if (n.name === self || !podCIDR) continue;
    if (!internalIP) {
      skipped.push(`node ${n.name} has podCIDR ${podCIDR} but no ${family} InternalIP yet`);
      continue;
    }
    const r = range(podCIDR);
    if (!r) {
      skipped.push(`node ${n.name}'s podCIDR ${podCIDR} is not an ${family} CIDR; no route`);
      continue;
    }
    const covered = addresses.find((a) => r.lo <= a.n && a.n <= r.hi);
    if (covered) {
      skipped.push(`node ${n.name}'s podCIDR ${podCIDR} covers node ${covered.node}'s address ${covered.ip}; no route`);
      continue;
    }
    const { at, clash } = place(r);
    if (clash) {
      skipped.push(`node ${n.name}'s podCIDR ${podCIDR} overlaps node ${clash.node}'s ${clash.cidr}; no route`);
      continue;
    }
    taken.splice(at, 0, { ...r, cidr: podCIDR, node: n.name });
    routes.push({ dst: podCIDR, via: internalIP });
  }
  return { routes, skipped };
}

/** The changes that turn `current` (our routes, by proto) into `desired`: replace new or moved ones, delete the rest. */
export function routeDiff(current: Route[], desired: Route[]): { replace: Route[]; remove: Route[] } {
  const cur = new Map(current.map((r) => [r.dst, `${r.via}|${r.dev ?? ''}`]));
  const want = new Set(desired.map((r) => r.dst));
  return {
    replace: desired.filter((r) => cur.get(r.dst) !== `${r.via}|${r.dev ?? ''}`),
    remove: current.filter((r) => !want.has(r.dst)),
  };
}

/** Our routes from `ip -j route show proto 77` (the device only for routes over a VXLAN device). */
export function parseRoutes(json: string): Route[] {
  const rows = JSON.parse(json || '[]') as { dst: string; gateway?: string; dev?: string }[];
  return rows
    .filter((r) => r.gateway)
    .map((r) => ({
      dst: r.dst.includes('/') ? r.dst : `${r.dst}/${r.dst.includes(':') ? 128 : 32}`,
      via: r.gateway!,
      ...(r.dev === VXLAN_DEV || r.dev === VXLAN_DEV6 ? { dev: r.dev } : {}),
    }));
}

/**
 * The CNI conflist for this node's podCIDRs (one host-local range per family: a dual-stack pod gets an address of
 * each): bridge with host-local IPAM, portmap, loopback. Masquerading is ours, not the bridge plugin's.
 */
export function podConflist(o: { podCIDRs: string[]; ipamDir?: string; bridge?: string; ipMasq?: boolean }): string {
  const ipam: Record<string, unknown> = {
    type: 'host-local',
    ranges: o.podCIDRs.map((subnet) => [{ subnet }]),
    routes: o.podCIDRs.map((c) => ({ dst: c.includes(':') ? '::/0' : '0.0.0.0/0' })),
  };
  if (o.ipamDir) ipam.dataDir = o.ipamDir;
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: o.bridge ?? BRIDGE,
          isGateway: true,
          ipMasq: o.ipMasq ?? false,
          hairpinMode: true,
          ipam,
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * The prefixes that stand for all podCIDRs of one family in the rules: their smallest common supernet (the cluster
 * CIDR, as flannel's rules use it) when it covers no node address, else each podCIDR. One rule instead of one per
 * node, and no rule change when a node joins.
 */
export function podNetworkPrefixes(cidrs: string[], nodeIPs: string[]): string[] {
  const uniq = [...new Set(cidrs)].sort();
  if (uniq.length < 2) return uniq;
  const ranges = uniq.map((c) => parseAnyCidr(c));
  const v6 = ranges[0]!.v6;
  if (ranges.some((r) => r.v6 !== v6)) return uniq;
  const width = v6 ? 128 : 32;
  let lo = ranges[0]!.base;
  let hi = lo;
  for (const r of ranges) {
    if (r.base < lo) lo = r.base;
    if (r.base + r.size - 1n > hi) hi = r.base + r.size - 1n;
  }
  let bits = width;
  while (bits > 0 && lo >> BigInt(width - bits) !== hi >> BigInt(width - bits)) bits--;
  const shift = BigInt(width - bits);
  const supernet = `${bigIntToIp((lo >> shift) << shift, v6)}/${bits}`;
  // No supernet wider than a /8 (IPv4) or /16 (IPv6): it would claim far more than the cluster's pods.
  return bits >= (v6 ? 16 : 8) && !nodeIPs.some((ip) => ipInAnyCidr(ip, supernet)) ? [supernet] : uniq;
}

/**
 * iptables-restore input (--noflush) for this node and one family (ip6tables-restore for IPv6): pods' traffic to
 * any podCIDR keeps its source; anything else leaving the node from a local pod is masqueraded (as flannel's
 * FLANNEL-POSTRTG). Forwarding to and from podCIDRs is accepted even under a DROP policy.
 * `podPrefixes` from podNetworkPrefixes.
 */
export function networkRules(ownCIDR: string, podPrefixes: string[]): string {
  const cidrs = [
    ...new Set(podPrefixes.some((p) => anyCidrsOverlap(p, ownCIDR)) ? podPrefixes : [ownCIDR, ...podPrefixes]),
  ].sort();
  const multicast = familyOfText(ownCIDR) === 'IPv6' ? 'ff00::/8' : '224.0.0.0/4';
  const nat = [
    '*nat',
    `:${NAT_CHAIN} - [0:0]`,
    // kube-proxy's marked packets get its own masquerade in KUBE-POSTROUTING.
    `-A ${NAT_CHAIN} -m mark --mark 0x4000/0x4000 -m comment --comment "kube-proxy masquerades these" -j RETURN`,
    ...cidrs.map(
      (c) => `-A ${NAT_CHAIN} -s ${ownCIDR} -d ${c} -m comment --comment "pod to pod keeps its source" -j RETURN`,
    ),
    `-A ${NAT_CHAIN} -s ${ownCIDR} ! -d ${multicast} -m comment --comment "pod egress leaves with the node address" -j MASQUERADE --random-fully`,
    'COMMIT',
  ];
  const filter = [
    '*filter',
    `:${FORWARD_CHAIN} - [0:0]`,
    ...cidrs.flatMap((c) => [
      `-A ${FORWARD_CHAIN} -s ${c} -m comment --comment "pod network" -j ACCEPT`,
      `-A ${FORWARD_CHAIN} -d ${c} -m comment --comment "pod network" -j ACCEPT`,
    ]),
    'COMMIT',
  ];
  return `${[...filter, ...nat].join('\n')}\n`;
}
