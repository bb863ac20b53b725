// Group chains: plain ClusterIP service ports (no external traffic, no
// affinity, no Local policy) have no chain of their own. Their rules (the
// masquerade check and the DNAT through their block of endpoint slots, each
// matching the port's own cluster IP and port) share one of GROUPS chains,
// picked by a hash of the chain name the port would have had. Every nf_tables
// commit walks every chain of the network namespace, so one
// chain per Service made each change cost more in a bigger cluster; with
// groups the chain count stays near GROUPS whatever the number of Services.
// A packet's first lookup walks at most its group's rules.
import { isServiceObject } from './names.js';

/** Chains Services are spread over (~30 service ports each at 30,000). */
export const GROUPS = 1024;
export const GROUP_PREFIX = 'clusterip-group/';

/** The group chain of a service chain name ("service-HASH-ns/svc/tcp/p"). FNV-1a: stable across versions. */
export function groupChainOf(serviceChain: string, groups = GROUPS): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < serviceChain.length; i++) h = Math.imul(h ^ serviceChain.charCodeAt(i), 0x01000193);
  return `${GROUP_PREFIX}${(h >>> 0) % groups}`;
}

export const isGroupChain = (chain: string): boolean => chain.startsWith(GROUP_PREFIX) && isServiceObject(chain);

/** A group chain's rules: its members' rules in the order of their Service keys (so any order of changes ends alike). */
export function groupRules(members: ReadonlyMap<string, readonly string[]>): string[] {
  return [...members.keys()].sort().flatMap((svc) => members.get(svc)!);
}

/** The group chains of a set of Services' fragments: group → Service → its rules there. */
export function groupMembers(
  frags: Iterable<readonly [string, { grouped: ReadonlyMap<string, readonly string[]> }]>,
): Map<string, Map<string, readonly string[]>> {
  const out = new Map<string, Map<string, readonly string[]>>();
  for (const [svc, f] of frags)
    for (const [g, rules] of f.grouped) {
      let m = out.get(g);
      if (!m) out.set(g, (m = new Map()));
      m.set(svc, rules);
    }
  return out;
}

/**
 * Who owns the slot block a rule names: its chain, or for a rule in a group chain, the "ip . proto . port" its
 * match names (the owner's cluster IP and port), since a group holds the rules of many.
 */
export function slotOwnerOfRule(chain: string, rule: string): string {
  if (!isGroupChain(chain)) return chain;
  const m = /^ip6? daddr (\S+) ([a-z]+) dport (\d+) /.exec(rule);
  return m ? `${m[1]} . ${m[2]} . ${m[3]}` : chain;
}
