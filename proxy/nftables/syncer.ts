// The nftables side of a sync. It remembers, per Service, the objects the
// kernel has (updated only after nft succeeds), so a partial sync renders and
// sends only the changed Services' differences; a full sync (start, after a
// failure, new node addresses) lists the table once and converges it in
// bounded transactions. Counts for the metrics are kept as running sums.
import type { Endpoint } from '../model/endpoints.js';
import type { ServicePort } from '../model/service-port.js';
import type { Nft } from './apply.js';
import { Commands, diffFragment, emptyPhased, opsOf, type Phased, phasedText, planFull, sameRules } from './diff.js';
import { groupMembers, groupRules } from './groups.js';
import { servicePortBase } from './names.js';
import { emptyFragment, type Fragment, renderBase, type RenderContext, renderService } from './render.js';
import { isSlotMap, rangesByBlock, SLOT_MAP_NAMES, SlotBlocks } from './slots.js';

/**
 * Commands per full-sync transaction. Every nft run first reads the whole ruleset (nft 1.0.x), so fewer, larger
 * transactions converge faster; this bound keeps each to a few seconds of nft (TSKUBE_NFT_CHUNK_OPS to tune).
 */
export const FULL_SYNC_CHUNK_OPS = Number(process.env.TSKUBE_NFT_CHUNK_OPS) || 100_000;

/** Chains retired by a transaction are deleted at the first sync this much later (kernels before 6.2 drop map
 * references late); with no change coming, the periodic sync (syncPeriod) does it, as upstream. */
export const STALE_CHAIN_DELAY_MS = 1000;

export interface NftSyncStats {
  full: boolean;
  /** nft commands sent. */
  ops: number;
  transactions: number;
  bytes: number;
  renderMs: number;
  applyMs: number;
}

export interface Totals {
  services: number;
  endpoints: number;
  noLocalInternal: number;
  noLocalExternal: number;
}

export class NftSyncer {
  private readonly cmd: Commands;
  /** Service "ns/name" → its objects in the kernel. */
  private readonly applied = new Map<string, Fragment>();
  /** Endpoint IP → how many Services' fragments hold its hairpin pair. */
  private readonly hairpinRefs = new Map<string, number>();
  /** Chains flushed and waiting to be deleted → when they were flushed. */
  private readonly stale = new Map<string, number>();
  /** Group chain → Service → its rules there, as the kernel has them. */
  private groups = new Map<string, Map<string, readonly string[]>>();
  /** Each service chain's block of endpoint slots. */
  private readonly blocks = new SlotBlocks();
  readonly totals: Totals = { services: 0, endpoints: 0, noLocalInternal: 0, noLocalExternal: 0 };

  constructor(
    private readonly nft: Nft,
    private ctx: RenderContext,
    private readonly o: { chunkOps?: number; now?: () => number; onCleanupError?: (e: Error) => void } = {},
  ) {
    this.cmd = new Commands(ctx.family);
  }

  /** New node addresses or detector: takes effect with the next full sync. */
  setContext(ctx: RenderContext): void {
    this.ctx = ctx;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** Deletes chains retired at least a second ago, in their own transaction; failures are retried at the next sync. */
  private async deleteStale(): Promise<number> {
    const due = [...this.stale].filter(([, at]) => at + STALE_CHAIN_DELAY_MS <= this.now()).map(([c]) => c);
    if (!due.length) return 0;
    for (const c of due) this.stale.delete(c);
    try {
      await this.nft.run(due.map(this.cmd.deleteChain).join('\n') + '\n');
    } catch (e) {
      // Still there: tried again at a later sync.
      const at = this.now();
      for (const c of due) this.stale.set(c, at);
      this.o.onCleanupError?.(e as Error);
    }
    return due.length;
  }

  private account(f: Fragment, sign: 1 | -1): void {
    this.totals.endpoints += sign * f.endpoints;
    this.totals.noLocalInternal += sign * f.noLocalInternal;
    this.totals.noLocalExternal += sign * f.noLocalExternal;
  }

  private commit(svc: string, next: Fragment): void {
    const prev = this.applied.get(svc);
    for (const ip of prev?.hairpins ?? []) {
      const n = (this.hairpinRefs.get(ip) ?? 0) - 1;
      if (n > 0) this.hairpinRefs.set(ip, n);
      else this.hairpinRefs.delete(ip);
    }
    for (const ip of next.hairpins) this.hairpinRefs.set(ip, (this.hairpinRefs.get(ip) ?? 0) + 1);
    if (prev) {
      this.account(prev, -1);
      for (const c of prev.chains.keys()) if (!next.chains.has(c)) this.stale.set(c, this.now());
      // A block goes with its owner (its ranges went in the same transaction); one moving between its own chain and
      // a group keeps it.
      for (const c of [...prev.chains.keys(), ...prev.groupedChains])
        if (!next.chains.has(c) && !next.groupedChains.has(c)) this.blocks.release(c);
    }
    for (const c of next.chains.keys()) this.stale.delete(c);
    for (const g of prev?.grouped.keys() ?? []) {
      if (next.grouped.has(g)) continue;
      const m = this.groups.get(g);
      m?.delete(svc);
      // Its last member gone: the group was flushed in the same transaction, and is deleted later as other chains.
      if (m && !m.size) {
        this.groups.delete(g);
        this.stale.set(g, this.now());
      }
    }
    for (const [g, rules] of next.grouped) {
      let m = this.groups.get(g);
      if (!m) this.groups.set(g, (m = new Map()));
      m.set(svc, rules);
    }
    if (next.chains.size || next.elements.length) {
      this.applied.set(svc, next);
      this.account(next, 1);
    } else this.applied.delete(svc);
    this.totals.services = this.applied.size;
  }

  /** Only the changed Services: their differences in one transaction. */
  async partial(
    changed: Iterable<string>,
    ports: ReadonlyMap<string, ServicePort[]>,
    endpoints: ReadonlyMap<string, Endpoint[]>,
  ): Promise<NftSyncStats> {
    const r0 = performance.now();
    await this.deleteStale();
    const phased = emptyPhased();
    const next = new Map<string, Fragment>();
    for (const svc of changed) {
      const sps = ports.get(svc);
      const prev = this.applied.get(svc) ?? emptyFragment();
      const had = rangesByBlock(prev.elements.filter((e) => isSlotMap(e.map)).map((e) => [e.key, e.value] as const));
      const f = sps?.length
        ? renderService(sps, endpoints as Map<string, Endpoint[]>, this.ctx, this.blocks, (b) => had.get(b))
        : emptyFragment();
      diffFragment(this.cmd, prev, f, phased);
      next.set(svc, f);
    }
    this.diffGroups(next, phased);
    // Hairpin pairs are shared between Services: added on the first reference, removed with the last.
    const delta = new Map<string, number>();
    for (const [svc, f] of next) {
      for (const ip of this.applied.get(svc)?.hairpins ?? []) delta.set(ip, (delta.get(ip) ?? 0) - 1);
      for (const ip of f.hairpins) delta.set(ip, (delta.get(ip) ?? 0) + 1);
    }
    for (const [ip, d] of delta) {
      const before = this.hairpinRefs.get(ip) ?? 0;
      if (before === 0 && before + d > 0) phased.map.push(this.cmd.addHairpin(ip));
      else if (before > 0 && before + d === 0) phased.unmap.push(this.cmd.deleteHairpin(ip));
    }
    const ops = opsOf(phased);
    const text = ops ? phasedText(phased) : '';
    const a0 = performance.now();
    if (ops) await this.nft.run(text);
    const applyMs = performance.now() - a0;
    for (const [svc, f] of next) this.commit(svc, f);
    return { full: false, ops, transactions: ops ? 1 : 0, bytes: text.length, renderMs: a0 - r0, applyMs };
  }

  /** The group chains the changed Services' fragments `next` touch, rewritten whole: created, refilled or retired. */
  private diffGroups(next: ReadonlyMap<string, Fragment>, out: Phased): void {
    const touched = new Set<string>();
    for (const [svc, f] of next)
      for (const g of [...(this.applied.get(svc)?.grouped.keys() ?? []), ...f.grouped.keys()]) touched.add(g);
    for (const g of touched) {
      const had = this.groups.get(g) ?? new Map<string, readonly string[]>();
      const members = new Map(had);
      for (const [svc, f] of next) {
        const rules = f.grouped.get(g);
        if (rules) members.set(svc, rules);
        else members.delete(svc);
      }
      const before = groupRules(had);
      const after = groupRules(members);
      if (sameRules(before, after)) continue;
      if (!after.length) out.retire.push(this.cmd.flushChain(g));
      else {
        // A group emptied earlier may still be there, waiting to be deleted: it is kept and refilled.
        this.stale.delete(g);
        if (!had.size) out.create.push(this.cmd.addChain(g));
        else out.fill.push(this.cmd.flushChain(g));
        for (const r of after) out.fill.push(this.cmd.addRule(g, r));
      }
    }
  }

  /** Everything, against one listing of the table, in bounded transactions. */
  async full(
    ports: ReadonlyMap<string, ServicePort[]>,
    endpoints: ReadonlyMap<string, Endpoint[]>,
  ): Promise<NftSyncStats> {
    const r0 = performance.now();
    const listing = await this.nft.list();
    // Chains keep the blocks the kernel has them with; blocks with ranges but no known owner are not handed out.
    this.blocks.clear();
    // A rule in a group chain names its owner by its cluster IP, protocol and port.
    const byTriple = new Map<string, string>();
    for (const sps of ports.values())
      for (const sp of sps) {
        const proto = sp.protocol.toLowerCase();
        byTriple.set(`${sp.clusterIP} . ${proto} . ${sp.port}`, `service-${servicePortBase(sp.name, proto)}`);
      }
    for (const [owner, b] of listing.slotBlocks ?? []) {
      if (listing.chains.has(owner)) this.blocks.adopt(owner, b);
      else if (byTriple.has(owner)) this.blocks.adopt(byTriple.get(owner)!, b);
    }
    const had = rangesByBlock(SLOT_MAP_NAMES.flatMap((m) => [...(listing.elements.get(m) ?? [])]));
    for (const b of had.keys()) this.blocks.reserve(b);
    const desired = new Map<string, Fragment>();
    for (const [svc, sps] of ports)
      if (sps.length)
        desired.set(
          svc,
          renderService(sps, endpoints as Map<string, Endpoint[]>, this.ctx, this.blocks, (b) => had.get(b)),
        );
    const members = groupMembers(desired);
    const groups: Fragment = { ...emptyFragment(), chains: new Map([...members].map(([g, m]) => [g, groupRules(m)])) };
    // Each transaction is sent before the next is planned: the cold sync holds one batch of commands at a time.
    const plan = planFull(
      this.cmd,
      renderBase(this.ctx),
      [...desired.values(), groups],
      listing,
      this.o.chunkOps ?? FULL_SYNC_CHUNK_OPS,
    );
    let applyMs = 0;
    let ops = 0;
    let bytes = 0;
    let transactions = 0;
    let step = plan.next();
    for (; !step.done; step = plan.next()) {
      const chunk = step.value;
      if (!chunk.length) continue;
      const text = chunk.join('\n') + '\n';
      const a0 = performance.now();
      await this.nft.run(text);
      applyMs += performance.now() - a0;
      ops += chunk.length;
      bytes += text.length;
      transactions++;
    }
    const retired = step.value;
    this.applied.clear();
    this.stale.clear();
    this.hairpinRefs.clear();
    this.groups = new Map();
    Object.assign(this.totals, { services: 0, endpoints: 0, noLocalInternal: 0, noLocalExternal: 0 });
    for (const [svc, f] of desired) this.commit(svc, f);
    const at = this.now();
    for (const c of retired) this.stale.set(c, at);
    return { full: true, ops, transactions, bytes, renderMs: performance.now() - r0 - applyMs, applyMs };
  }
}
