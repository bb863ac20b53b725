// Endpoint slots: how a service chain picks an endpoint without naming it.
// Each chain that DNATs to endpoints owns a block of 4096 consecutive keys
// in one of the endpoint-slots-<proto>-N interval maps, and its one rule never
// changes: `dnat to numgen random mod 4096 offset <block start> map
// @endpoint-slots-<proto>-N`. Its endpoints share the block as near-equal ranges, so
// an endpoint change is a few map element operations. Element changes in a
// map without verdicts do not make the kernel re-validate the whole table,
// which it does for every rule or verdict element added (its cost grows with
// the table), so a change costs the same at any cluster size.

/** Keys per block: an endpoint's share is a range of them (the skew between endpoints is at most 1/4096). */
export const SLOT_BITS = 12;
export const SLOTS = 1 << SLOT_BITS;
/**
 * Maps the blocks are spread over, per protocol (nft 1.0.x cannot take one map's `th dport` for rules of several
 * protocols). The kernel's interval sets (rbtree) insert in time linear in their size, so one map for 30,000 Services
 * is slow to fill and to change (docs/benchmarks.md, "Engine settings"); many small maps keep each change cheap.
 */
export const SHARDS: Record<string, number> = { tcp: 256, udp: 64, sctp: 16 };
/** Blocks 1 … MAX_BLOCK: block × 4096 + 4095 stays below 2^32, and the range end (exclusive) fits in 32 bits too. */
export const MAX_BLOCK = (1 << (32 - SLOT_BITS)) - 2;

export const SLOT_MAP_PREFIX = 'endpoint-slots-';
/** The map a block's ranges are in, for a chain of this protocol ("tcp", "udp", "sctp"). */
export const slotMapName = (block: number, proto: string): string =>
  `${SLOT_MAP_PREFIX}${proto}-${block % (SHARDS[proto] ?? 1)}`;
export const SLOT_MAPS: readonly { name: string; proto: string }[] = Object.entries(SHARDS).flatMap(([proto, n]) =>
  Array.from({ length: n }, (_, i) => ({ name: `${SLOT_MAP_PREFIX}${proto}-${i}`, proto })),
);
export const SLOT_MAP_NAMES: readonly string[] = SLOT_MAPS.map((m) => m.name);
export const isSlotMap = (name: string): boolean => name.startsWith(SLOT_MAP_PREFIX);

/** A service chain's DNAT rule through its block (the one rule that names the block). */
export const slotRule = (proto: string, family: 'ip' | 'ip6', block: number): string =>
  `meta l4proto ${proto} dnat ${family} to numgen random mod ${SLOTS} offset ${block * SLOTS} map @${slotMapName(block, proto)}`;

/**
 * A plain ClusterIP service port's slot rule in its group chain (see groups.ts): its own match, then the DNAT through
 * its block.
 */
export const groupSlotRule = (
  proto: string,
  family: 'ip' | 'ip6',
  block: number,
  clusterIP: string,
  port: number,
): string =>
  `${family} daddr ${clusterIP} ${proto} dport ${port} dnat ${family} to numgen random mod ${SLOTS} offset ${block * SLOTS} map @${slotMapName(block, proto)}`;

/** The block a rule's text names, if it is a slot rule. */
export function blockOfRule(rule: string): number | undefined {
  const m = /numgen random mod \d+ offset (\d+) map @endpoint-slots-[a-z]+-\d+$/.exec(rule);
  return m ? Number(m[1]) / SLOTS : undefined;
}

/** The keys [lo, hi] of each of n endpoints in a block: near-equal shares of the 4096. */
export function slotRanges(block: number, n: number): [number, number][] {
  const base = block * SLOTS;
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++)
    out.push([base + Math.floor((i * SLOTS) / n), base + Math.floor(((i + 1) * SLOTS) / n) - 1]);
  return out;
}

/** The block a range key ("lo-hi") belongs to. */
export const blockOfKey = (key: string): number => Math.floor(Number(key.split('-')[0]) / SLOTS);

/** Ranges ("lo-hi" → "ip . port") grouped by their block. */
export function rangesByBlock(ranges: Iterable<readonly [string, string]>): Map<number, Map<string, string>> {
  const out = new Map<number, Map<string, string>>();
  for (const [k, v] of ranges) {
    const b = blockOfKey(k);
    let r = out.get(b);
    if (!r) out.set(b, (r = new Map()));
    r.set(k, v);
  }
  return out;
}

/**
 * Which block each chain owns. A chain keeps its block while it exists (its rule names it); blocks are handed out
 * in increasing order and wrap around, so one given up is not reused soon, and never while the kernel may still
 * hold its ranges (reserve). After a restart, the blocks found in the kernel's rules are adopted.
 */
export class SlotBlocks {
  private readonly byChain = new Map<string, number>();
  private readonly used = new Set<number>();
  private next = 1;

  /** The chain's block, given one if it has none. Undefined when all are taken. */
  blockOf(chain: string): number | undefined {
    const have = this.byChain.get(chain);
    if (have !== undefined) return have;
    for (let tries = 0; tries < MAX_BLOCK; tries++) {
      const b = this.next;
      this.next = b >= MAX_BLOCK ? 1 : b + 1;
      if (this.used.has(b)) continue;
      this.used.add(b);
      this.byChain.set(chain, b);
      return b;
    }
    return undefined;
  }

  /** A chain found in the kernel with this block. */
  adopt(chain: string, block: number): void {
    if (block < 1 || block > MAX_BLOCK || this.used.has(block)) return;
    this.used.add(block);
    this.byChain.set(chain, block);
  }

  /** A block that has ranges in the kernel but no known owner: not handed out until released. */
  reserve(block: number): void {
    this.used.add(block);
  }

  release(chain: string): void {
    const b = this.byChain.get(chain);
    if (b === undefined) return;
    this.byChain.delete(chain);
    this.used.delete(b);
  }

  clear(): void {
    this.byChain.clear();
    this.used.clear();
    this.next = 1;
  }

  get size(): number {
    return this.byChain.size;
  }
}
