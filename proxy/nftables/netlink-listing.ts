// Pure: a full sync's listing of `table ip|ip6 kube-proxy` read from the kernel's
// netlink dumps (chains, sets, the elements of the dispatch maps and the
// hairpin set) instead of three `nft -j list` runs, each of which reads every
// rule of the ruleset first (seconds at 10k Services). Gives what listingOf
// gives from nft's JSON; e2e/nft-netlink.test.ts compares the two.
import type { Listing } from './diff.js';
import { isGroupChain } from './groups.js';
import { isServiceObject, TABLE } from './names.js';
import {
  addressText,
  attrList,
  attrs,
  cstr,
  FAMILY,
  fieldLength,
  KEYS,
  message,
  messageAttrs,
  NFNL_SUBSYS_NFTABLES,
  NFT_SET_ELEM_INTERVAL_END,
  type NftFamily,
  NLM_F_REQUEST,
  str,
} from './netlink-encode.js';
import { HAIRPIN, MAPS } from './render.js';
import { isSlotMap, SLOTS } from './slots.js';

const NLM_F_DUMP = 0x300;
const MSG = { GETTABLE: 1, GETCHAIN: 4, GETRULE: 7, GETSET: 10, GETSETELEM: 13 } as const;
const HOOKS = ['prerouting', 'input', 'forward', 'output', 'postrouting'];
const PROTO_NAMES: Record<number, string> = { 6: 'tcp', 17: 'udp', 132: 'sctp' };
const VERDICTS: Record<number, string> = { 0: 'drop', 1: 'accept', [-3]: 'jump', [-4]: 'goto', [-5]: 'return' };

const request = (fam: NftFamily, cmd: number, dump: boolean, attrs: Parameters<typeof message>[4]): Buffer =>
  message((NFNL_SUBSYS_NFTABLES << 8) | cmd, NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0x4), FAMILY[fam].nfproto, 0, attrs);

/**
 * The requests a listing needs, in order: the table, its chains, its sets, each map's elements, then each service
 * chain's rules: one chain at a time, as the kernel resumes a dump of the whole table by walking it from the start
 * for every datagram (quadratic at 100k rules), and one chain's rules fit in one.
 */
export const listingRequests = (fam: NftFamily) => ({
  table: (): Buffer => request(fam, MSG.GETTABLE, false, [[1, str(TABLE)]]),
  chains: (): Buffer => request(fam, MSG.GETCHAIN, true, [[1, str(TABLE)]]),
  sets: (): Buffer => request(fam, MSG.GETSET, true, [[1, str(TABLE)]]),
  elements: (set: string): Buffer =>
    request(fam, MSG.GETSETELEM, true, [
      [1, str(TABLE)],
      [2, str(set)],
    ]),
  rules: (chain: string): Buffer =>
    request(fam, MSG.GETRULE, true, [
      [1, str(TABLE)],
      [2, str(chain)],
    ]),
});

/** The maps and sets whose elements a listing holds. */
export const LISTED_SETS = [...MAPS, HAIRPIN];

/** An element key as the text syntax: "172.30.0.41 . tcp . 80", "fd00::41 . tcp . 80". */
export function keyText(set: string, key: Buffer, fam: NftFamily = 'ip'): string | undefined {
  const layout = KEYS[set];
  if (!layout || key.length !== layout.reduce((n, f) => n + fieldLength(fam, f), 0)) return undefined;
  let at = 0;
  return layout
    .map((f) => {
      const o = at;
      at += fieldLength(fam, f);
      if (f === 'ip') return addressText(key.subarray(o, at));
      if (f === 'proto') return PROTO_NAMES[key[o]!] ?? String(key[o]);
      return String(key.readUInt16BE(o));
    })
    .join(' . ');
}

/** A verdict (NFTA_DATA_VERDICT payload) as text: "goto service-…", "drop". */
function verdictText(v: Buffer): string {
  const a = attrs(v);
  const code = a.get(1)?.readInt32BE(0) ?? 0;
  const chain = cstr(a.get(2));
  const name = VERDICTS[code] ?? `verdict ${code}`;
  return chain ? `${name} ${chain}` : name;
}

/**
 * The listing from the dumps' messages (each a whole netlink message): tableFound from the GETTABLE answer, then the
 * chain, set and element messages. Undefined when an element cannot be read back (then nft's listing is used).
 */
export function listingOfDumps(
  tableFound: boolean,
  chainMsgs: Buffer[],
  setMsgs: Buffer[],
  elementMsgs: Map<string, Buffer[]>,
  fam: NftFamily = 'ip',
): Listing | undefined {
  const listing: Listing = {
    tableExists: tableFound,
    chains: new Set(),
    sets: new Map(),
    elements: new Map(),
    baseChains: new Map(),
  };
  if (!tableFound) return { tableExists: false, chains: new Set(), sets: new Map(), elements: new Map() };
  for (const m of chainMsgs) {
    const a = messageAttrs(m);
    if (cstr(a.get(1)) !== TABLE) continue;
    const name = cstr(a.get(3));
    const hook = a.get(4);
    if (isServiceObject(name)) listing.chains.add(name);
    else if (hook) {
      const h = attrs(hook);
      const num = h.get(1)?.readUInt32BE(0) ?? -1;
      listing.baseChains!.set(name, `${cstr(a.get(7))} ${HOOKS[num] ?? String(num)} ${h.get(2)?.readInt32BE(0) ?? 0}`);
    }
  }
  for (const m of setMsgs) {
    const a = messageAttrs(m);
    if (cstr(a.get(1)) !== TABLE) continue;
    const name = cstr(a.get(2));
    // NFTA_SET_TIMEOUT, in milliseconds.
    if (isServiceObject(name)) listing.sets.set(name, Number((a.get(11)?.readBigUInt64BE(0) ?? 0n) / 1000n));
  }
  for (const set of LISTED_SETS) {
    if (isSlotMap(set)) {
      const els = slotElements(elementMsgs.get(set) ?? [], fam);
      if (!els) return undefined;
      listing.elements.set(set, els);
      continue;
    }
    const els = new Map<string, string>();
    for (const m of elementMsgs.get(set) ?? []) {
      const list = messageAttrs(m).get(3);
      if (!list) continue;
      for (const [, e] of attrList(list)) {
        const ea = attrs(e);
        const keyData = ea.get(1) && attrs(ea.get(1)!).get(1);
        const key = keyData && keyText(set, keyData, fam);
        if (key === undefined) return undefined;
        const data = ea.get(2) && attrs(ea.get(2)!).get(2);
        els.set(key, set === HAIRPIN ? '' : data ? verdictText(data) : '');
      }
    }
    listing.elements.set(set, els);
  }
  return listing;
}

/**
 * An endpoint-slots map's ranges ("lo-hi" → "ip . port") from its dump: the kernel's interval set lists each range's
 * start (with the value) and end (exclusive, flagged) as elements of their own; a start's end is the nearest end
 * above it. Undefined when a start has no end or a value of another size.
 */
function slotElements(msgs: Buffer[], fam: NftFamily): Map<string, string> | undefined {
  const starts: [number, Buffer][] = [];
  const ends: number[] = [];
  for (const m of msgs) {
    const list = messageAttrs(m).get(3);
    if (!list) continue;
    for (const [, e] of attrList(list)) {
      const ea = attrs(e);
      const key = ea.get(1) && attrs(ea.get(1)!).get(1);
      if (!key || key.length !== 4) return undefined;
      const flags = ea.get(3)?.readUInt32BE(0) ?? 0;
      if (flags & NFT_SET_ELEM_INTERVAL_END) ends.push(key.readUInt32BE(0));
      else {
        const data = ea.get(2) && attrs(ea.get(2)!).get(1);
        if (!data || data.length !== FAMILY[fam].len + 4) return undefined;
        starts.push([key.readUInt32BE(0), data]);
      }
    }
  }
  ends.sort((a, b) => a - b);
  const out = new Map<string, string>();
  for (const [lo, data] of starts.sort((a, b) => a[0] - b[0])) {
    // The first end above lo (binary search).
    let a = 0;
    let b = ends.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (ends[mid]! > lo) b = mid;
      else a = mid + 1;
    }
    if (a === ends.length) return undefined;
    const len = FAMILY[fam].len;
    out.set(`${lo}-${ends[a]! - 1}`, `${addressText(data.subarray(0, len))} . ${data.readUInt16BE(len)}`);
  }
  return out;
}

/**
 * The block of endpoint slots a service chain's rule (a NEWRULE message of a dump) looks up, with its owner: the
 * chain, or in a group chain the "ip . proto . port" the rule matches first (see groups.ts slotOwnerOfRule).
 */
export function slotBlockOfRule(m: Buffer): [string, number] | undefined {
  const a = messageAttrs(m);
  const list = a.get(4);
  if (!list) return undefined;
  const chain = cstr(a.get(2));
  let offset: number | undefined;
  let addr: string | undefined;
  let proto: string | undefined;
  let port: number | undefined;
  for (const [, e] of attrList(list)) {
    const ea = attrs(e);
    const name = cstr(ea.get(1));
    const data = ea.get(2) ? attrs(ea.get(2)!) : undefined;
    if (name === 'cmp') {
      // NFTA_CMP_DATA's value: the address, the l4proto byte, the port, in the order the rule matches them.
      const v = data?.get(3) && attrs(data.get(3)!).get(1);
      if (v?.length === 4 || v?.length === 16) addr ??= addressText(v);
      else if (v?.length === 1) proto ??= PROTO_NAMES[v[0]!];
      else if (v?.length === 2) port ??= v.readUInt16BE(0);
    } else if (name === 'numgen') offset = data?.get(4)?.readUInt32BE(0);
    // NFTA_LOOKUP_SET
    else if (
      name === 'lookup' &&
      offset !== undefined &&
      isSlotMap(cstr(data?.get(1))) &&
      offset >= SLOTS &&
      offset % SLOTS === 0
    ) {
      if (!isGroupChain(chain)) return [chain, offset / SLOTS];
      return addr !== undefined && proto !== undefined && port !== undefined
        ? [`${addr} . ${proto} . ${port}`, offset / SLOTS]
        : undefined;
    }
  }
  return undefined;
}
