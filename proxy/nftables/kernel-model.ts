// Test double for the kernel side of `nft -f -`: an in-memory table that
// runs the commands the syncer sends, atomically, and refuses what the
// kernel refuses (rules into missing chains, jumps to missing chains or sets,
// deleting a referenced or non-empty chain, a duplicate map key with another
// verdict, deleting what is not there). Lists itself as ExecNft.list does.
import type { Nft } from './apply.js';
import type { Listing } from './diff.js';
import { slotOwnerOfRule } from './groups.js';
import { isServiceObject } from './names.js';
import { chainDigest } from './netlink-digest.js';
import { HAIRPIN, MAPS } from './render.js';
import { blockOfRule, isSlotMap, SLOTS } from './slots.js';

interface State {
  table: boolean;
  chains: Map<string, string[]>;
  /** Base chains: name → "type hook priority". */
  base: Map<string, string>;
  sets: Map<string, number>;
  maps: Map<string, Map<string, string>>;
}

const clone = (s: State): State => ({
  table: s.table,
  chains: new Map([...s.chains].map(([k, v]) => [k, [...v]])),
  base: new Map(s.base),
  sets: new Map(s.sets),
  maps: new Map([...s.maps].map(([k, v]) => [k, new Map(v)])),
});

/** Chains and sets a rule or verdict refers to. */
function refs(text: string): { chains: string[]; sets: string[] } {
  const chains = [...text.matchAll(/\b(?:goto|jump) ([^\s,}]+)/g)].map((m) => m[1]!);
  const sets = [...text.matchAll(/@([^\s,}]+)/g)].map((m) => m[1]!);
  return { chains, sets };
}

export class KernelModel implements Nft {
  state: State = { table: false, chains: new Map(), base: new Map(), sets: new Map(), maps: new Map() };
  transactions: string[] = [];
  /** Fail the transaction whose text matches. */
  failWhen: ((text: string) => boolean) | undefined;
  /** List with the digests of the chains' rules, as NetlinkNft does (a rule the encoder does not know: no match). */
  withDigests = false;
  /** The table's family, from the commands it was given. */
  private family: 'ip' | 'ip6' = 'ip';

  async run(text: string): Promise<void> {
    if (this.failWhen?.(text)) throw new Error('nft -f - failed (exit 1): injected failure');
    const s = clone(this.state);
    for (const line of text.split('\n')) if (line.trim()) this.exec(s, line);
    this.state = s;
    this.transactions.push(text);
  }

  private exec(s: State, line: string): void {
    const fail = (why: string): never => {
      throw new Error(`nft -f - failed: ${why}: ${line}`);
    };
    const m = /^(add|flush|delete) (table|chain|rule|set|map|element) (ip6?) kube-proxy ?(\S*) ?(.*)$/.exec(line);
    if (!m) return fail('cannot parse');
    const [, verb, obj, family, name, rest] = m as unknown as [string, string, string, 'ip' | 'ip6', string, string];
    this.family = family;
    if (obj !== 'table' && !s.table) fail('no table');
    const used = (): { chains: Set<string>; sets: Set<string> } => {
      const chains = new Set<string>();
      const sets = new Set<string>();
      for (const rules of s.chains.values())
        for (const r of rules) {
          const x = refs(r);
          x.chains.forEach((c) => chains.add(c));
          x.sets.forEach((c) => sets.add(c));
        }
      for (const els of s.maps.values()) for (const v of els.values()) refs(v).chains.forEach((c) => chains.add(c));
      return { chains, sets };
    };
    switch (`${verb} ${obj}`) {
      case 'add table':
        s.table = true;
        return;
      case 'add chain': {
        const b = /^\{ type (\S+) hook (\S+) priority (\S+) ; \}$/.exec(rest);
        const spec = b ? `${b[1]} ${b[2]} ${b[3]}` : undefined;
        if (s.chains.has(name) && s.base.get(name) !== spec)
          fail('Operation not supported (hook or priority of an existing chain)');
        if (!s.chains.has(name)) s.chains.set(name, []);
        if (spec) s.base.set(name, spec);
        return;
      }
      case 'flush chain':
        if (!s.chains.has(name)) fail('no such chain');
        s.chains.set(name, []);
        return;
      case 'delete chain':
        if (!s.chains.has(name)) fail('no such chain');
        if (s.chains.get(name)!.length) fail('chain not empty');
        if (used().chains.has(name)) fail('chain in use');
        s.chains.delete(name);
        s.base.delete(name);
        return;
      case 'add rule': {
        if (!s.chains.has(name)) fail('no such chain');
        const x = refs(rest);
        for (const c of x.chains) if (!s.chains.has(c)) fail(`no such chain ${c}`);
        for (const c of x.sets) if (!s.sets.has(c) && !s.maps.has(c) && c !== 'nodeport-ips') fail(`no such set ${c}`);
        s.chains.get(name)!.push(rest);
        return;
      }
      case 'add set': {
        if (name === 'nodeport-ips') return;
        if (name === HAIRPIN) {
          if (!s.maps.has(name)) s.maps.set(name, new Map());
          return;
        }
        const t = Number(/timeout (\d+)s/.exec(rest)?.[1] ?? 0);
        if (s.sets.has(name) && s.sets.get(name) !== t) fail('set exists with another timeout');
        s.sets.set(name, t);
        return;
      }
      case 'delete set':
        if (name === 'nodeport-ips') return;
        if (!s.sets.has(name)) fail('no such set');
        if (used().sets.has(name)) fail('set in use');
        s.sets.delete(name);
        return;
      case 'flush set':
        return;
      case 'add map':
        if (!s.maps.has(name)) s.maps.set(name, new Map());
        return;
      case 'add element': {
        if (name === 'nodeport-ips') return;
        const els = s.maps.get(name) ?? fail('no such map');
        if (name === HAIRPIN) {
          const key = (/^\{ (.+) \}$/.exec(rest) ?? fail('bad element'))[1]!;
          if (els.has(key)) fail('element exists');
          els.set(key, '');
          return;
        }
        const em = /^\{ (.+?)(?: comment "[^"]*")? : (.+) \}$/.exec(rest) ?? fail('bad element');
        const [, key, value] = em as unknown as [string, string, string];
        for (const c of refs(value).chains) if (!s.chains.has(c)) fail(`no such chain ${c}`);
        if (els.has(key) && els.get(key) !== value) fail('element exists');
        if (isSlotMap(name) && !els.has(key)) {
          // The kernel refuses a range that overlaps one it has.
          const [lo, hi] = key.split('-').map(Number) as [number, number];
          for (const k of els.keys()) {
            const [a, b] = k.split('-').map(Number) as [number, number];
            if (lo <= b && a <= hi) fail(`interval overlaps ${k}`);
          }
        }
        els.set(key, value);
        return;
      }
      case 'delete element': {
        const els = s.maps.get(name) ?? fail('no such map');
        const key = (/^\{ (.+) \}$/.exec(rest) ?? fail('bad element'))[1]!;
        if (!els.delete(key)) fail('no such element');
        return;
      }
      default:
        fail('unsupported');
    }
  }

  async list(): Promise<Listing> {
    const s = this.state;
    return {
      tableExists: s.table,
      chains: new Set([...s.chains.keys()].filter(isServiceObject)),
      sets: new Map([...s.sets].filter(([k]) => isServiceObject(k))),
      elements: new Map([...MAPS, HAIRPIN].map((m) => [m, new Map(s.maps.get(m) ?? [])])),
      baseChains: new Map(s.base),
      ...(this.withDigests
        ? {
            digests: new Map(
              [...s.chains]
                .filter(([, r]) => r.length)
                .map(([c, r]) => [c, chainDigest(r, this.family) ?? `unknown rules of ${c}`]),
            ),
            slotBlocks: new Map(
              [...s.chains].flatMap(([c, rules]) =>
                rules.flatMap((r) => {
                  const b = blockOfRule(r);
                  return b === undefined ? [] : [[slotOwnerOfRule(c, r), b] as [string, number]];
                }),
              ),
            ),
          }
        : {}),
    };
  }

  /**
   * Service chains with their rules, sets and map elements, for comparing two tables. Which block of endpoint slots a
   * chain has, and which of its ranges an endpoint has, depend on the order of past changes, so slots are shown by
   * owner: the rule's block as `<slots>`; under "endpoint-slots", "<chain> values" (the endpoints, sorted) and
   * "<chain> sizes" (the ranges' sizes, sorted; an owner-less range's owner is "unowned").
   */
  snapshot(): {
    chains: Record<string, string[]>;
    sets: Record<string, number>;
    maps: Record<string, Record<string, string>>;
  } {
    const sorted = <V>(m: Map<string, V>, keep: (k: string) => boolean = () => true): Record<string, V> =>
      Object.fromEntries([...m].filter(([k]) => keep(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
    const owner = new Map<number, string>();
    const chains = new Map<string, string[]>();
    for (const [c, rules] of this.state.chains) {
      chains.set(
        c,
        rules.map((r) => {
          const b = blockOfRule(r);
          if (b === undefined) return r;
          const o = slotOwnerOfRule(c, r);
          owner.set(b, o === c ? c : `${c} ${o}`);
          return r.replace(/offset \d+ map @\S+$/, 'offset <slots> map @<slots>');
        }),
      );
    }
    const maps = new Map<string, Map<string, string>>();
    const byOwner = new Map<string, { values: string[]; sizes: number[] }>();
    for (const [m, els] of this.state.maps) {
      if (!isSlotMap(m)) {
        maps.set(m, els);
        continue;
      }
      for (const [k, v] of els) {
        const [lo, hi] = k.split('-').map(Number) as [number, number];
        const o = owner.get(Math.floor(lo / SLOTS)) ?? 'unowned';
        let g = byOwner.get(o);
        if (!g) byOwner.set(o, (g = { values: [], sizes: [] }));
        g.values.push(v);
        g.sizes.push(hi - lo + 1);
      }
    }
    const slots = new Map<string, string>();
    for (const [o, g] of byOwner) {
      slots.set(`${o} values`, g.values.sort().join(', '));
      slots.set(`${o} sizes`, g.sizes.sort((a, b) => a - b).join(','));
    }
    maps.set('endpoint-slots', slots);
    return {
      chains: sorted(chains),
      sets: sorted(this.state.sets),
      maps: Object.fromEntries([...maps].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sorted(v)])),
    };
  }
}
