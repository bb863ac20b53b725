// Pure: the nft commands that turn one Service's objects from what the kernel
// has into what they should be, and the chunked plan of a full resync against
// a listing of the table. Commands come in phases so that, across Services,
// everything a command refers to exists before it and is unused after it.
import { TABLE } from './names.js';
import { chainDigest, EMPTY_CHAIN_DIGEST } from './netlink-digest.js';
import { DISPATCH_MAPS, type Element, type Fragment, HAIRPIN } from './render.js';
import { rangesByBlock, SLOT_MAP_NAMES } from './slots.js';

/** A transaction's commands, by phase; a transaction is the phases concatenated in this order. */
export interface Phased {
  /** Affinity sets to create, and chains to create (empty), so rules may refer to them. */
  create: string[];
  /** Chains to fill: flush and rules. */
  fill: string[];
  /** Map elements to remove (gone or changing). */
  unmap: string[];
  /** Map elements to add. */
  map: string[];
  /** Chains no longer used: flushed now, deleted a second later (kernels before 6.2 release map references late). */
  retire: string[];
  /** Affinity sets no longer used (their rules were flushed above). */
  drop: string[];
}

export const emptyPhased = (): Phased => ({ create: [], fill: [], unmap: [], map: [], retire: [], drop: [] });
export const opsOf = (p: Phased): number =>
  p.create.length + p.fill.length + p.unmap.length + p.map.length + p.retire.length + p.drop.length;
export const phasedText = (p: Phased): string =>
  [...p.create, ...p.fill, ...p.unmap, ...p.map, ...p.retire, ...p.drop].join('\n') + '\n';

export class Commands {
  constructor(readonly family: 'ip' | 'ip6') {}
  private get t(): string {
    return `${this.family} ${TABLE}`;
  }
  addChain = (c: string): string => `add chain ${this.t} ${c}`;
  flushChain = (c: string): string => `flush chain ${this.t} ${c}`;
  deleteChain = (c: string): string => `delete chain ${this.t} ${c}`;
  addRule = (c: string, r: string): string => `add rule ${this.t} ${c} ${r}`;
  addSet = (s: string, timeout: number): string =>
    `add set ${this.t} ${s} { type ${this.family === 'ip' ? 'ipv4_addr' : 'ipv6_addr'} ; flags dynamic,timeout ; timeout ${timeout}s ; }`;
  deleteSet = (s: string): string => `delete set ${this.t} ${s}`;
  addElement = (e: Element): string =>
    `add element ${this.t} ${e.map} { ${e.key}${e.comment ? ` comment ${JSON.stringify(e.comment)}` : ''} : ${e.value} }`;
  deleteElement = (map: string, key: string): string => `delete element ${this.t} ${map} { ${key} }`;
  addHairpin = (ip: string): string => `add element ${this.t} ${HAIRPIN} { ${ip} . ${ip} }`;
  deleteHairpin = (ip: string): string => `delete element ${this.t} ${HAIRPIN} { ${ip} . ${ip} }`;
}

export const sameRules = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  !!a && !!b && a.length === b.length && a.every((r, i) => r === b[i]);
const elementId = (e: { map: string; key: string }): string => `${e.map}\u0000${e.key}`;
const sameElement = (a: Element, b: Element): boolean => a.value === b.value && (a.comment ?? '') === (b.comment ?? '');

/** The commands that change one Service's objects from `prev` (in the kernel) to `next`. */
export function diffFragment(cmd: Commands, prev: Fragment, next: Fragment, out: Phased = emptyPhased()): Phased {
  // A set's timeout cannot change in place: its rules are flushed, the set is made again, and the rules come back.
  const retimed = [...next.sets].filter(([s, t]) => prev.sets.has(s) && prev.sets.get(s) !== t);
  for (const [s, timeout] of next.sets) if (!prev.sets.has(s)) out.create.push(cmd.addSet(s, timeout));
  for (const c of next.chains.keys()) if (!prev.chains.has(c)) out.create.push(cmd.addChain(c));
  if (retimed.length) {
    for (const c of next.chains.keys()) if (prev.chains.get(c)?.length) out.fill.push(cmd.flushChain(c));
    for (const [c, rules] of prev.chains) if (!next.chains.has(c) && rules.length) out.fill.push(cmd.flushChain(c));
    for (const [s, timeout] of retimed) out.fill.push(cmd.deleteSet(s), cmd.addSet(s, timeout));
    for (const [c, rules] of next.chains) for (const r of rules) out.fill.push(cmd.addRule(c, r));
  } else {
    for (const [c, rules] of next.chains) {
      if (sameRules(prev.chains.get(c), rules)) continue;
      if (prev.chains.get(c)?.length) out.fill.push(cmd.flushChain(c));
      for (const r of rules) out.fill.push(cmd.addRule(c, r));
    }
  }
  const before = new Map(prev.elements.map((e) => [elementId(e), e]));
  const after = new Map(next.elements.map((e) => [elementId(e), e]));
  for (const [id, e] of before) {
    const n = after.get(id);
    if (!n || !sameElement(e, n)) out.unmap.push(cmd.deleteElement(e.map, e.key));
  }
  for (const [id, e] of after) {
    const p = before.get(id);
    if (!p || !sameElement(p, e)) out.map.push(cmd.addElement(e));
  }
  if (!retimed.length)
    for (const [c, rules] of prev.chains) if (!next.chains.has(c) && rules.length) out.retire.push(cmd.flushChain(c));
  for (const s of prev.sets.keys()) if (!next.sets.has(s)) out.drop.push(cmd.deleteSet(s));
  return out;
}

/** Service objects found in the kernel: the start of a full resync. */
export interface Listing {
  tableExists: boolean;
  /** Chain names with a "/" (service and endpoint chains). */
  chains: Set<string>;
  /** Affinity set name → timeout in seconds. */
  sets: Map<string, number>;
  /** Map name → key → value. */
  elements: Map<string, Map<string, string>>;
  /** Base chains found: name → "type hook priority" (e.g. "nat prerouting -100"). */
  baseChains?: Map<string, string>;
  /** Digest of each chain's rules as the kernel dumps them (chains with rules only), when the rules were read. */
  digests?: Map<string, string>;
  /** The endpoint-slots block each service chain's DNAT rule names, when the rules were read. */
  slotBlocks?: Map<string, number>;
}

export const emptyListing = (): Listing => ({
  tableExists: false,
  chains: new Set(),
  sets: new Map(),
  elements: new Map(),
});

/**
 * Commands per full-sync transaction meant for netlink: small enough for one batch (the proxy sends larger ones, and
 * any with a command its encoder does not know, through nft, which reads the whole ruleset first, and every element
 * of an interval set before it adds to one).
 */
export const NETLINK_CHUNK_OPS = 500;

/**
 * A full resync as bounded transactions, never one giant one: endpoint chains before the service chains that jump to
 * them, those before the map elements that point at them, and nothing removed before everything new is in. Chains
 * already present are rewritten in place (flush and refill in one transaction), so traffic keeps flowing throughout,
 * unless the listing's digests show the kernel has their rules already. What the netlink encoder knows goes in small
 * transactions (NETLINK_CHUNK_OPS), the rest (affinity sets, rules with fib or comments) in large ones for nft, so
 * that nft, which reads the whole ruleset every run, runs few times.
 *
 * Transactions are yielded in order as each is complete (fixed objects; sets and endpoint chains; endpoint slots;
 * service chains; map elements; retirement), so that a caller sending each before asking for the next holds one
 * batch of commands at a time rather than all of a cold sync's at once.
 * Returns the chains flushed by the plan, to delete later.
 */
export function* planFull(
  cmd: Commands,
  base: string[],
  desired: Iterable<Fragment>,
  listing: Listing,
  chunkOps: number,
): Generator<string[], string[]> {
  // A base chain whose hook or priority changed (another version's layout) cannot be altered in place: it is
  // flushed, deleted and made again in the same transaction as the rest of the fixed objects.
  const remake: string[] = [];
  for (const line of base) {
    const m = /^add chain \S+ \S+ (\S+) \{ type (\S+) hook (\S+) priority (\S+) ; \}$/.exec(line);
    const have = m ? listing.baseChains?.get(m[1]!) : undefined;
    if (m && have !== undefined && have !== `${m[2]} ${m[3]} ${m[4]}`)
      remake.push(cmd.flushChain(m[1]!), cmd.deleteChain(m[1]!));
  }
  /** Transactions complete and not yet yielded, in order. */
  const ready: string[][] = [[...remake, ...base]];
  function* drain(): Generator<string[], void> {
    while (ready.length) yield ready.shift()!;
  }
  /** Transactions of at most `bound` commands; a group of commands never split. */
  const batcher = (bound: number) => {
    let cur: string[] = [];
    return {
      push(cmds: string[]): void {
        if (cur.length && cur.length + cmds.length > bound) {
          ready.push(cur);
          cur = [];
        }
        cur.push(...cmds);
      },
      flush(): void {
        if (cur.length) ready.push(cur);
        cur = [];
      },
    };
  };
  const viaNft = batcher(chunkOps);
  const viaNetlink = batcher(Math.min(chunkOps, NETLINK_CHUNK_OPS));
  const push = (cmds: string[], netlink = false): void => (netlink ? viaNetlink : viaNft).push(cmds);
  /** Ends the phase: what it batched goes before anything of the next. */
  function* endPhase(): Generator<string[], void> {
    viaNetlink.flush();
    viaNft.flush();
    yield* drain();
  }
  const frags = [...desired];
  /** Chains emptied above (an affinity timeout changed): refilled whatever the digests say. */
  const flushed = new Set<string>();
  const wantChains = new Set<string>();
  const wantSets = new Set<string>();
  for (const f of frags) {
    const retimed = [...f.sets].filter(([s, t]) => listing.sets.has(s) && listing.sets.get(s) !== t);
    if (retimed.length) {
      // Rare (the timeout changed while the proxy was down): that Service's chains are empty until refilled below.
      const flush = [...f.chains.keys()].filter((c) => listing.chains.has(c));
      flush.forEach((c) => flushed.add(c));
      push([...flush.map(cmd.flushChain), ...retimed.flatMap(([s, t]) => [cmd.deleteSet(s), cmd.addSet(s, t)])]);
    }
    for (const [s, timeout] of f.sets) {
      wantSets.add(s);
      if (!listing.sets.has(s)) push([cmd.addSet(s, timeout)]);
    }
    yield* drain();
  }
  // A chain whose rules the kernel already has, byte for byte (a restart over our own table), is left alone.
  const fill = (c: string, rules: string[]): void => {
    const digest = chainDigest(rules, cmd.family);
    if (
      digest !== undefined &&
      listing.digests &&
      listing.chains.has(c) &&
      !flushed.has(c) &&
      (listing.digests.get(c) ?? EMPTY_CHAIN_DIGEST) === digest
    )
      return;
    push(
      [cmd.addChain(c), ...(listing.chains.has(c) ? [cmd.flushChain(c)] : []), ...rules.map((r) => cmd.addRule(c, r))],
      digest !== undefined,
    );
  };
  // Chains of a phase may refer to each other across its nft and netlink transactions: new ones are made first.
  function* create(which: (c: string) => boolean): Generator<string[], void> {
    for (const f of frags) {
      for (const c of f.chains.keys()) if (which(c) && !listing.chains.has(c)) push([cmd.addChain(c)], true);
      yield* drain();
    }
    yield* endPhase();
  }
  /** Fills the chains `which` picks, recording them as wanted. */
  function* fillAll(which: (c: string) => boolean): Generator<string[], void> {
    for (const f of frags) {
      for (const [c, rules] of f.chains)
        if (which(c)) {
          wantChains.add(c);
          fill(c, rules);
        }
      yield* drain();
    }
    yield* endPhase();
  }
  const isEndpointChain = (c: string): boolean => c.startsWith('endpoint-');
  yield* create(isEndpointChain);
  yield* fillAll(isEndpointChain);
  const want = new Map<string, Map<string, Element>>();
  for (const f of frags)
    for (const e of f.elements) {
      let m = want.get(e.map);
      if (!m) want.set(e.map, (m = new Map()));
      m.set(e.key, e);
    }
  // Endpoint slots before the service chains that look them up. A block whose ranges differ has them swapped in one
  // transaction (old and new ranges may overlap); blocks nobody wants any more go at the end.
  const staleSlots: string[] = [];
  for (const m of SLOT_MAP_NAMES) {
    const haveBy = rangesByBlock(listing.elements.get(m) ?? []);
    const wantBy = rangesByBlock([...(want.get(m)?.values() ?? [])].map((e) => [e.key, e.value] as const));
    for (const [b, have] of haveBy)
      if (!wantBy.has(b)) staleSlots.push(...[...have.keys()].map((k) => cmd.deleteElement(m, k)));
    for (const [b, w] of wantBy) {
      const have = haveBy.get(b) ?? new Map<string, string>();
      const del = [...have].filter(([k, v]) => w.get(k) !== v).map(([k]) => cmd.deleteElement(m, k));
      const add = [...w]
        .filter(([k, v]) => have.get(k) !== v)
        .map(([key, value]) => cmd.addElement({ map: m, key, value }));
      if (del.length || add.length) push([...del, ...add], true);
      yield* drain();
    }
  }
  // Hairpin pairs: one per endpoint IP any Service DNATs to through a map; new ones with the slots, stale ones last.
  const wantPins = new Set<string>();
  for (const f of frags) for (const ip of f.hairpins) wantPins.add(ip);
  const havePins = new Set([...(listing.elements.get(HAIRPIN)?.keys() ?? [])].map((k) => k.split(' . ')[0]!));
  for (const ip of wantPins) {
    if (!havePins.has(ip)) push([cmd.addHairpin(ip)], true);
    yield* drain();
  }
  yield* endPhase();
  yield* create((c) => !isEndpointChain(c));
  yield* fillAll((c) => !isEndpointChain(c));
  for (const m of DISPATCH_MAPS) {
    const have = listing.elements.get(m) ?? new Map<string, string>();
    const w = want.get(m) ?? new Map<string, Element>();
    for (const [key, value] of have) {
      const e = w.get(key);
      if (!e) push([cmd.deleteElement(m, key)], true);
      else if (e.value !== value) push([cmd.deleteElement(m, key), cmd.addElement(e)], true);
      yield* drain();
    }
    for (const [key, e] of w) {
      if (!have.has(key)) push([cmd.addElement(e)], true);
      yield* drain();
    }
  }
  for (const d of staleSlots) {
    push([d], true);
    yield* drain();
  }
  for (const ip of havePins) {
    if (!wantPins.has(ip)) push([cmd.deleteHairpin(ip)], true);
    yield* drain();
  }
  yield* endPhase();
  const retired: string[] = [];
  for (const c of listing.chains)
    if (!wantChains.has(c)) {
      push([cmd.flushChain(c)], true);
      retired.push(c);
      yield* drain();
    }
  yield* endPhase();
  for (const s of listing.sets.keys())
    if (!wantSets.has(s)) {
      push([cmd.deleteSet(s)]);
      yield* drain();
    }
  yield* endPhase();
  return retired;
}
