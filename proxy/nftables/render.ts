// What upstream's nftables proxier puts in `table ip kube-proxy`, split in two
// pure parts: the fixed objects (base chains, dispatch maps, helper chains),
// and one Fragment per Service (its chains, map elements and affinity sets,
// and its rules in group chains). Fragments of different Services share no
// object but group chains, whose rules are each a Service's own, so a change
// is rendered from that Service alone, whatever the size of the cluster.
import { categorize, trafficPlan } from '../model/categorize.js';
import { type Endpoint, portKey } from '../model/endpoints.js';
import { cidrContains } from '../model/family.js';
import type { ServicePort } from '../model/service-port.js';
import { groupChainOf } from './groups.js';
import { endpointBase, servicePortBase, TABLE } from './names.js';
import {
  groupSlotRule,
  SLOT_MAP_NAMES,
  SLOT_MAPS,
  type SlotBlocks,
  slotMapName,
  slotRanges,
  slotRule,
  SLOTS,
} from './slots.js';

export const SERVICES = 'services';
export const SERVICE_IPS = 'service-ips';
export const SERVICE_NODEPORTS = 'service-nodeports';
export const NODEPORT_IPS = 'nodeport-ips';
export const ENDPOINTS_CHECK = 'endpoints-check';
export const NO_ENDPOINT_SERVICES = 'no-endpoint-services';
export const NO_ENDPOINT_NODEPORTS = 'no-endpoint-nodeports';
export const REJECT_CHAIN = 'reject-chain';
export const FIREWALL_IPS = 'firewall-ips';
export const FIREWALL_CHECK = 'firewall-check';
export const FORWARD = 'forward';
export const MARK_MASQ = 'mark-for-masquerade';
export const MASQUERADING = 'masquerading';
/** Endpoint IPs as "ip . ip" pairs: a DNATed packet from an endpoint to itself is masqueraded (hairpin). */
export const HAIRPIN = 'hairpin-endpoints';

/** The verdict maps a Fragment's elements go to. */
export const DISPATCH_MAPS = [
  SERVICE_IPS,
  SERVICE_NODEPORTS,
  NO_ENDPOINT_SERVICES,
  NO_ENDPOINT_NODEPORTS,
  FIREWALL_IPS,
] as const;
/** Every map a Fragment's elements go to: the endpoint slot maps first (a full sync fills them before the chains that use them). */
export const MAPS: readonly string[] = [...SLOT_MAP_NAMES, ...DISPATCH_MAPS];

export interface RenderContext {
  family: 'ip' | 'ip6';
  /** "0x00004000" for masquerade bit 14 (upstream's %#08x). */
  masqueradeMark: string;
  masqueradeAll: boolean;
  /** The local traffic detector's match ("ip saddr 10.0.0.0/8"), or undefined when none is configured. */
  localMatch?: string;
  /** Its negation ("ip saddr != 10.0.0.0/8"). */
  notLocalMatch?: string;
  /** The node's IP, for loadBalancerSourceRanges that include it. */
  nodeIP?: string;
  /** IPs that accept NodePorts; undefined: every local address (`fib daddr type local`). */
  nodePortIPs?: string[];
  conntrackTCPLiberal: boolean;
  /** How many group chains plain ClusterIP ports are spread over (groups.ts GROUPS; fewer in tests, to share them). */
  groups?: number;
}

export interface Element {
  map: string;
  key: string;
  value: string;
  comment?: string;
}

export interface Fragment {
  /** Chain name → its rules, in order. */
  chains: Map<string, string[]>;
  /** Group chain → this Service's rules in it (see groups.ts). */
  grouped: Map<string, string[]>;
  /** Service chain names whose rules are in a group instead: they own their slot blocks as chains do. */
  groupedChains: Set<string>;
  elements: Element[];
  /** Affinity set name → timeout in seconds. */
  sets: Map<string, number>;
  /** Endpoint IPs this Service DNATs to without an endpoint chain: their hairpin traffic is masqueraded through @hairpin-endpoints. */
  hairpins: Set<string>;
  noLocalInternal: number;
  noLocalExternal: number;
  endpoints: number;
}

export const emptyFragment = (): Fragment => ({
  chains: new Map(),
  grouped: new Map(),
  groupedChains: new Set(),
  elements: [],
  sets: new Map(),
  hairpins: new Set(),
  noLocalInternal: 0,
  noLocalExternal: 0,
  endpoints: 0,
});

const addrType = (f: 'ip' | 'ip6'): string => (f === 'ip' ? 'ipv4_addr' : 'ipv6_addr');
const q = (s: string): string => JSON.stringify(s);

/** The fixed objects, created and (for chains) flushed and refilled; maps and sets keep their elements. */
export function renderBase(c: RenderContext): string[] {
  const T = `${c.family} ${TABLE}`;
  const ipX = c.family;
  const addr = addrType(c.family);
  const noLocalhost = c.family === 'ip' ? 'ip daddr != 127.0.0.0/8' : 'ip6 daddr != ::1';
  const out: string[] = [`add table ${T} { comment "rules for kube-proxy" ; }`];
  const base: [string, string, string, string][] = [
    // Upstream's dstnat - 10, dstnat and srcnat, as numbers: nft 1.0.x takes the names in some hooks only.
    ['filter-prerouting', 'filter', 'prerouting', '-110'],
    ['filter-input', 'filter', 'input', '-110'],
    ['filter-forward', 'filter', 'forward', '-110'],
    ['filter-output', 'filter', 'output', '-110'],
    ['nat-prerouting', 'nat', 'prerouting', '-100'],
    ['nat-output', 'nat', 'output', '-100'],
    ['nat-postrouting', 'nat', 'postrouting', '100'],
  ];
  for (const [name, type, hook, prio] of base)
    out.push(`add chain ${T} ${name} { type ${type} hook ${hook} priority ${prio} ; }`, `flush chain ${T} ${name}`);
  const chain = (name: string, comment?: string): void =>
    void out.push(`add chain ${T} ${name}${comment ? ` { comment ${q(comment)} ; }` : ''}`, `flush chain ${T} ${name}`);
  const rule = (ch: string, r: string): void => void out.push(`add rule ${T} ${ch} ${r}`);
  for (const ch of [ENDPOINTS_CHECK, FIREWALL_CHECK, FORWARD, SERVICES, MASQUERADING, MARK_MASQ]) chain(ch);
  chain(REJECT_CHAIN, 'helper for @no-endpoint-services / @no-endpoint-nodeports');
  const jumps: [string, string, string][] = [
    [ENDPOINTS_CHECK, 'filter-input', 'ct state new '],
    [ENDPOINTS_CHECK, 'filter-forward', 'ct state new '],
    [ENDPOINTS_CHECK, 'filter-output', 'ct state new '],
    [FIREWALL_CHECK, 'filter-prerouting', 'ct state new '],
    [FIREWALL_CHECK, 'filter-output', 'ct state new '],
    [FORWARD, 'filter-forward', ''],
    [SERVICES, 'nat-output', ''],
    [SERVICES, 'nat-prerouting', ''],
    [MASQUERADING, 'nat-postrouting', ''],
  ];
  for (const [dst, src, extra] of jumps) rule(src, `${extra}jump ${dst}`);
  rule(MARK_MASQ, `mark set mark or ${c.masqueradeMark}`);
  out.push(
    `add set ${T} ${HAIRPIN} { type ${addr} . ${addr} ; comment "endpoints reached through a service DNAT map: traffic from one to itself is masqueraded" ; }`,
  );
  rule(MASQUERADING, `ct status dnat ${ipX} saddr . ${ipX} daddr @${HAIRPIN} mark set mark or ${c.masqueradeMark}`);
  rule(MASQUERADING, `mark and ${c.masqueradeMark} == 0 return`);
  rule(MASQUERADING, `mark set mark xor ${c.masqueradeMark}`);
  rule(MASQUERADING, 'masquerade fully-random');
  rule(REJECT_CHAIN, 'reject');
  if (!c.conntrackTCPLiberal) rule(FORWARD, 'ct state invalid drop');

  // NodePort addresses: a set of IPs, or every local address.
  out.push(`add set ${T} ${NODEPORT_IPS} { type ${addr} ; comment "IPs that accept NodePort traffic" ; }`);
  if (c.nodePortIPs === undefined) out.push(`delete set ${T} ${NODEPORT_IPS}`);
  else {
    out.push(`flush set ${T} ${NODEPORT_IPS}`);
    if (c.nodePortIPs.length) out.push(`add element ${T} ${NODEPORT_IPS} { ${c.nodePortIPs.join(', ')} }`);
  }
  const nodePortMatch =
    c.nodePortIPs === undefined ? `fib daddr type local ${noLocalhost}` : `${ipX} daddr @${NODEPORT_IPS}`;
  const triple = `${addr} . inet_proto . inet_service : verdict`;
  out.push(
    `add map ${T} ${NO_ENDPOINT_SERVICES} { type ${triple} ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
  );
  out.push(
    `add map ${T} ${NO_ENDPOINT_NODEPORTS} { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`,
  );
  rule(ENDPOINTS_CHECK, `${ipX} daddr . meta l4proto . th dport vmap @${NO_ENDPOINT_SERVICES}`);
  rule(ENDPOINTS_CHECK, `${nodePortMatch} meta l4proto . th dport vmap @${NO_ENDPOINT_NODEPORTS}`);
  out.push(
    `add map ${T} ${FIREWALL_IPS} { type ${triple} ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`,
  );
  rule(FIREWALL_CHECK, `${ipX} daddr . meta l4proto . th dport vmap @${FIREWALL_IPS}`);
  out.push(
    `add map ${T} ${SERVICE_IPS} { type ${triple} ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`,
  );
  out.push(
    `add map ${T} ${SERVICE_NODEPORTS} { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
  );
  rule(SERVICES, `${ipX} daddr . meta l4proto . th dport vmap @${SERVICE_IPS}`);
  rule(SERVICES, `${nodePortMatch} meta l4proto . th dport vmap @${SERVICE_NODEPORTS}`);
  for (const m of SLOT_MAPS)
    out.push(
      `add map ${T} ${m.name} { typeof numgen random mod 1 : ${ipX} daddr . ${m.proto} dport ; flags interval ; comment "endpoints of ${m.proto} service chains, by numgen slot" ; }`,
    );
  return out;
}

/** A block's ranges as the kernel has them ("lo-hi" → "ip . port"), if known. */
export type SlotsOf = (block: number) => ReadonlyMap<string, string> | undefined;

/**
 * The chains, map elements and affinity sets of one Service's ports. `blocks` gives each service chain its block of
 * endpoint slots; `had`, the ranges the kernel has in a block, so an endpoint replaced by another takes over its range
 * and the others keep theirs (one range changed, not all of them).
 */
export function renderService(
  ports: ServicePort[],
  endpoints: Map<string, Endpoint[]>,
  c: RenderContext,
  blocks: SlotBlocks,
  had?: SlotsOf,
): Fragment {
  const f = emptyFragment();
  const ipX = c.family;
  for (const sp of ports) {
    const proto = sp.protocol.toLowerCase();
    const name = sp.name;
    const eps = endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? [];
    f.endpoints += eps.length;
    const cat = categorize(eps, sp);
    const { cluster, local, reachable, hasAny } = cat;
    const base = servicePortBase(name, proto);
    const clusterChain = `service-${base}`;
    const localChain = `local-${base}`;
    const externalChain = `external-${base}`;
    const fwChain = `firewall-${base}`;
    const epNames = new Map<Endpoint, string>();
    const epBase = (e: Endpoint): string => {
      let b = epNames.get(e);
      if (b === undefined) epNames.set(e, (b = endpointBase(name, proto, e.ip, e.port)));
      return b;
    };
    const chain = (ch: string): string[] => {
      let rules = f.chains.get(ch);
      if (!rules) f.chains.set(ch, (rules = []));
      return rules;
    };
    const { usesCluster, usesLocal, hasInternal, hasExternal, usesExternal } = trafficPlan(sp, cat);
    const sticky = sp.stickySeconds > 0;
    // A plain ClusterIP port has its rules in a group chain, when it gets a block of slots.
    const plain =
      usesCluster &&
      hasInternal &&
      !sticky &&
      !usesLocal &&
      !usesExternal &&
      !sp.internalPolicyLocal &&
      cluster.length > 0 &&
      cluster.length <= SLOTS;
    const groupBlock = plain ? blocks.blockOf(clusterChain) : undefined;
    const group = groupBlock !== undefined ? groupChainOf(clusterChain, c.groups) : undefined;
    let groupRules: string[] = [];
    if (group !== undefined) {
      f.groupedChains.add(clusterChain);
      // Several ports of one Service may share a group: their rules follow each other.
      groupRules = f.grouped.get(group) ?? [];
      f.grouped.set(group, groupRules);
    }
    const internalChain = group ?? (sp.internalPolicyLocal ? localChain : clusterChain);
    const externalPolicyChain = sp.externalPolicyLocal ? localChain : clusterChain;
    let intVerdict = '';
    let extVerdict = '';
    if (!hasAny) intVerdict = extVerdict = `goto ${REJECT_CHAIN}`;
    else {
      if (!hasInternal) {
        intVerdict = 'drop';
        f.noLocalInternal++;
      }
      if (!hasExternal) {
        extVerdict = 'drop';
        f.noLocalExternal++;
      }
    }
    const triple = (ip: string): string => `${ip} . ${proto} . ${sp.port}`;
    if (sp.stickySeconds) for (const e of reachable) chain(`endpoint-${epBase(e)}`);
    if (usesCluster && group === undefined) chain(clusterChain);
    if (usesLocal) chain(localChain);
    if (usesExternal) chain(externalChain);

    // Dispatch: cluster IP, external IPs, load balancer IPs, NodePort.
    if (hasInternal) f.elements.push({ map: SERVICE_IPS, key: triple(sp.clusterIP), value: `goto ${internalChain}` });
    else f.elements.push({ map: NO_ENDPOINT_SERVICES, key: triple(sp.clusterIP), value: intVerdict, comment: name });
    for (const ip of sp.externalIPs) {
      if (hasAny) f.elements.push({ map: SERVICE_IPS, key: triple(ip), value: `goto ${externalChain}` });
      if (!hasExternal)
        f.elements.push({ map: NO_ENDPOINT_SERVICES, key: triple(ip), value: extVerdict, comment: name });
    }
    const usesFW = sp.loadBalancerIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
    if (usesFW) {
      // Upstream's `saddr != { sources } drop`, as one rule per source (no anonymous set, see below).
      const sources = [...sp.loadBalancerSourceRanges];
      if (c.nodeIP && sp.loadBalancerSourceRanges.some((r) => cidrContains(r, c.nodeIP!)))
        sources.push(...sp.loadBalancerIPs);
      chain(fwChain).push(...sources.map((src) => `${ipX} saddr ${src} return`), 'drop');
    }
    for (const ip of sp.loadBalancerIPs) {
      if (hasAny) f.elements.push({ map: SERVICE_IPS, key: triple(ip), value: `goto ${externalChain}` });
      if (usesFW) f.elements.push({ map: FIREWALL_IPS, key: triple(ip), value: `goto ${fwChain}`, comment: name });
    }
    if (!hasExternal)
      for (const ip of sp.loadBalancerIPs)
        f.elements.push({ map: NO_ENDPOINT_SERVICES, key: triple(ip), value: extVerdict, comment: name });
    if (sp.nodePort) {
      // NodePorts are not subject to loadBalancerSourceRanges.
      if (hasAny)
        f.elements.push({ map: SERVICE_NODEPORTS, key: `${proto} . ${sp.nodePort}`, value: `goto ${externalChain}` });
      if (!hasExternal)
        f.elements.push({
          map: NO_ENDPOINT_NODEPORTS,
          key: `${proto} . ${sp.nodePort}`,
          value: extVerdict,
          comment: name,
        });
    }

    if (hasInternal) {
      const m = `${ipX} daddr ${sp.clusterIP} ${proto} dport ${sp.port}`;
      const rules = group !== undefined ? groupRules : chain(internalChain);
      if (c.masqueradeAll) rules.push(`${m} jump ${MARK_MASQ}`);
      else if (c.notLocalMatch) rules.push(`${m} ${c.notLocalMatch} jump ${MARK_MASQ}`);
    }
    if (usesExternal) {
      const ext = chain(externalChain);
      if (!sp.externalPolicyLocal) ext.push(`jump ${MARK_MASQ}`);
      else {
        // Pods and the node itself reach an external destination as if through the load balancer: Cluster policy.
        if (c.localMatch && usesCluster)
          ext.push(`${c.localMatch} goto ${clusterChain} comment "short-circuit pod traffic"`);
        ext.push(`fib saddr type local jump ${MARK_MASQ} comment "masquerade local traffic"`);
        if (usesCluster) ext.push(`fib saddr type local goto ${clusterChain} comment "short-circuit local traffic"`);
      }
      if (hasExternal) ext.push(`goto ${externalPolicyChain}`);
    }
    // ClientIP affinity needs per-endpoint state: upstream's endpoint chains and affinity sets, picked by a cascade
    // (rule i of n matches with probability 1/(n-i), as iptables' statistic rules; not upstream's `numgen … vmap`,
    // since every inline map is an anonymous set, which nft 1.0.x handles in quadratic time). Without it, the service
    // chain's one DNAT rule looks its endpoint up in its block of an endpoint-slots map (see slots.ts): endpoint
    // changes are map elements only.
    if (sticky) for (const e of reachable) f.sets.set(`affinity-${epBase(e)}`, sp.stickySeconds);
    const target = (e: Endpoint): string => (c.family === 'ip6' ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`);
    const dnat = (e: Endpoint): string => `meta l4proto ${proto} dnat ${ipX} to ${target(e)}`;
    const toSlots = (block: number, list: Endpoint[]): void => {
      const map = slotMapName(block, proto);
      const keys = slotRanges(block, list.length).map(([lo, hi]) => `${lo}-${hi}`);
      keepRanges(
        keys,
        list.map((e) => `${e.ip} . ${e.port}`),
        had?.(block),
      ).forEach((value, i) => f.elements.push({ map, key: keys[i]!, value }));
      for (const e of list) f.hairpins.add(e.ip);
    };
    const toEndpoints = (ch: string, list: Endpoint[]): void => {
      const rules = chain(ch);
      const block = !sticky && list.length && list.length <= SLOTS ? blocks.blockOf(ch) : undefined;
      if (block !== undefined) {
        rules.push(slotRule(proto, c.family, block));
        toSlots(block, list);
        return;
      }
      if (sticky) for (const e of list) rules.push(`${ipX} saddr @affinity-${epBase(e)} goto endpoint-${epBase(e)}`);
      list.forEach((e, i) => {
        const pick = i < list.length - 1 ? `numgen random mod ${list.length - i} == 0 ` : '';
        rules.push(sticky ? `${pick}goto endpoint-${epBase(e)}` : `${pick}${dnat(e)}`);
        if (!sticky) f.hairpins.add(e.ip);
      });
    };
    if (groupBlock !== undefined) {
      groupRules.push(groupSlotRule(proto, c.family, groupBlock, sp.clusterIP, sp.port));
      toSlots(groupBlock, cluster);
    } else if (usesCluster) toEndpoints(clusterChain, cluster);
    if (usesLocal) toEndpoints(localChain, local);
    if (sticky) {
      for (const e of reachable) {
        const rules = chain(`endpoint-${epBase(e)}`);
        rules.push(`${ipX} saddr ${e.ip} jump ${MARK_MASQ}`);
        rules.push(`update @affinity-${epBase(e)} { ${ipX} saddr }`);
        rules.push(dnat(e));
      }
    }
  }
  return f;
}

/**
 * Endpoint values for the ranges `keys`, in order: an endpoint the kernel already has in one of these ranges stays
 * there; the others fill the remaining ranges in their order. Without a previous assignment, the endpoints' order.
 */
export function keepRanges(keys: string[], values: string[], had: ReadonlyMap<string, string> | undefined): string[] {
  if (!had?.size) return values;
  const out: (string | undefined)[] = keys.map(() => undefined);
  const placed = new Set<string>();
  const wanted = new Set(values);
  keys.forEach((k, i) => {
    const v = had.get(k);
    if (v !== undefined && wanted.has(v) && !placed.has(v)) {
      out[i] = v;
      placed.add(v);
    }
  });
  const rest = values.filter((v) => !placed.has(v));
  return out.map((v) => v ?? rest.shift()!);
}
