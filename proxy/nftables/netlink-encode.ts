// Pure: the nft commands a partial sync sends, as nf_tables netlink messages,
// so that a one-endpoint change does not pay for `nft` reading the whole
// ruleset first (nft 1.0.x does, on every run). Only the shapes our renderer
// and diff produce for `table ip kube-proxy` and `table ip6 kube-proxy` are
// known here, encoded exactly as nft 1.0.6 encodes them (`nft --debug=netlink`);
// any other line makes the whole transaction go through `nft -f -` instead.
import { bigIntToIp, ipToBigInt } from '../../kube/cidr.js';
import { TABLE } from './names.js';
import {
  FIREWALL_IPS,
  HAIRPIN,
  NO_ENDPOINT_NODEPORTS,
  NO_ENDPOINT_SERVICES,
  SERVICE_IPS,
  SERVICE_NODEPORTS,
} from './render.js';

// linux/netlink.h, linux/netfilter/nfnetlink.h, linux/netfilter/nf_tables.h
export const NLM_F_REQUEST = 0x1;
const NLM_F_ACK = 0x4;
const NLM_F_CREATE = 0x400;
const NLM_F_APPEND = 0x800;
const NLA_F_NESTED = 0x8000;
const NFNL_MSG_BATCH_BEGIN = 0x10;
const NFNL_MSG_BATCH_END = 0x11;
export const NFNL_SUBSYS_NFTABLES = 10;
export const NFPROTO_IPV4 = 2;

/** The table families: the nfgenmsg family, and where the addresses are in the network header. */
export type NftFamily = 'ip' | 'ip6';
export const FAMILY: Record<NftFamily, { nfproto: number; len: number; saddr: number; daddr: number }> = {
  ip: { nfproto: NFPROTO_IPV4, len: 4, saddr: 12, daddr: 16 },
  ip6: { nfproto: 10, len: 16, saddr: 8, daddr: 24 },
};
const MSG = { NEWCHAIN: 3, DELCHAIN: 5, NEWRULE: 6, DELRULE: 8, NEWSETELEM: 12, DELSETELEM: 14 } as const;
const VERDICT = { drop: 0, accept: 1, return: -5, jump: -3, goto: -4 } as const;
export const PROTO: Record<string, number> = { tcp: 6, udp: 17, sctp: 132 };
const REG_VERDICT = 0;
const REG_1 = 1;
const REG_2 = 2;

/** One attribute: type and payload (bytes, or nested attributes). */
type Attr = [type: number, value: Buffer | Attr[]];

// Small values (registers, lengths, types) are shared, read-only buffers: a restart encodes every rule of the table.
const SMALL = Array.from({ length: 256 }, (_, n) => Buffer.from([0, 0, 0, n]));
const u32 = (n: number): Buffer => {
  if (n >= 0 && n < 256) return SMALL[n]!;
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const i32 = (n: number): Buffer => {
  if (n >= 0) return u32(n);
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(n);
  return b;
};
export const str = (s: string): Buffer => Buffer.from(`${s}\0`, 'utf8');

const attrsSize = (attrs: Attr[]): number => {
  let n = 0;
  for (const [, v] of attrs) n += 4 + (((Array.isArray(v) ? attrsSize(v) : v.length) + 3) & ~3);
  return n;
};

function writeAttrs(attrs: Attr[], out: Buffer, at: number, dump: boolean): number {
  for (const [type, value] of attrs) {
    const start = at;
    at += 4;
    if (Array.isArray(value)) at = writeAttrs(value, out, at, dump);
    else at += value.copy(out, at);
    out.writeUInt16LE(at - start, start);
    out.writeUInt16LE(type | (Array.isArray(value) && !dump ? NLA_F_NESTED : 0), start + 2);
    const pad = (4 - ((at - start) % 4)) % 4;
    out.fill(0, at, at + pad);
    at += pad;
  }
  return at;
}

/** `dump`: as the kernel dumps them, without the NLA_F_NESTED flag nft sets. */
export function encodeAttrs(attrs: Attr[], dump = false): Buffer {
  const out = Buffer.allocUnsafe(attrsSize(attrs));
  writeAttrs(attrs, out, 0, dump);
  return out;
}

/** nlmsghdr + nfgenmsg + attributes; the sequence number is set when the batch is numbered. */
export function message(type: number, flags: number, family: number, resId: number, attrs: Attr[]): Buffer {
  const body = encodeAttrs(attrs);
  const b = Buffer.alloc(20 + body.length);
  b.writeUInt32LE(b.length, 0);
  b.writeUInt16LE(type, 4);
  b.writeUInt16LE(flags, 6);
  b.writeUInt8(family, 16);
  b.writeUInt8(0, 17); // NFNETLINK_V0
  b.writeUInt16BE(resId, 18);
  body.copy(b, 20);
  return b;
}

const nftMsg = (fam: NftFamily, cmd: number, flags: number, attrs: Attr[]): Buffer =>
  message((NFNL_SUBSYS_NFTABLES << 8) | cmd, NLM_F_REQUEST | NLM_F_ACK | flags, FAMILY[fam].nfproto, 0, attrs);

// Expressions: [NFTA_LIST_ELEM, [NFTA_EXPR_NAME, NFTA_EXPR_DATA]].
const EXPR_NAMES = new Map<string, Buffer>();
const exprName = (name: string): Buffer =>
  EXPR_NAMES.get(name) ?? (EXPR_NAMES.set(name, str(name)), EXPR_NAMES.get(name)!);
const expr = (name: string, data: Attr[]): Attr => [
  1,
  [
    [1, exprName(name)],
    [2, data],
  ],
];
const value = (b: Buffer): Attr[] => [[1, b]]; // NFTA_DATA_VALUE
const verdictData = (code: number, chain?: string): Attr[] => [
  [2, [[1, i32(code)], ...(chain ? [[2, str(chain)] as Attr] : [])]],
]; // NFTA_DATA_VERDICT
const payload = (base: number, offset: number, len: number): Attr =>
  expr('payload', [
    [1, u32(REG_1)],
    [2, u32(base)],
    [3, u32(offset)],
    [4, u32(len)],
  ]);
const cmp = (op: 0 | 1, data: Buffer): Attr =>
  expr('cmp', [
    [1, u32(REG_1)],
    [2, u32(op)],
    [3, value(data)],
  ]);
const metaL4proto = (): Attr =>
  expr('meta', [
    [2, u32(16)],
    [1, u32(REG_1)],
  ]);
const immediate = (reg: number, data: Attr[]): Attr =>
  expr('immediate', [
    [1, u32(reg)],
    [2, data],
  ]);

function ipv4(s: string): Buffer | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? Buffer.from(octets) : undefined;
}

/** An IPv6 address in the RFC 5952 form the renderer writes (anything else is left to nft). */
function ipv6(s: string): Buffer | undefined {
  if (!/^[0-9a-f:]+$/.test(s)) return undefined;
  let n: bigint;
  try {
    n = ipToBigInt(s);
  } catch {
    return undefined;
  }
  if (bigIntToIp(n, true) !== s) return undefined;
  const b = Buffer.alloc(16);
  b.writeBigUInt64BE(n >> 64n, 0);
  b.writeBigUInt64BE(n & 0xffffffffffffffffn, 8);
  return b;
}

/** An address of the family, as network-order bytes. */
export const address = (fam: NftFamily, s: string): Buffer | undefined => (fam === 'ip' ? ipv4(s) : ipv6(s));

/** Network-order address bytes as the renderer writes them. */
export function addressText(b: Buffer): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  return bigIntToIp((b.readBigUInt64BE(0) << 64n) | b.readBigUInt64BE(8), true);
}

const port = (s: string): number | undefined => (/^\d{1,5}$/.test(s) && Number(s) <= 65535 ? Number(s) : undefined);
const be16 = (n: number): Buffer => Buffer.from([n >> 8, n & 255]);

/**
 * How a rule is encoded: as nft sends it, or as the kernel dumps it back (which a restart compares with, to leave
 * unchanged chains alone): the kernel adds the bitwise operation, the nat range maxima and the map-IPs flag.
 */
export type Form = 'send' | 'dump';

/** `ip[6] saddr|daddr [!=] A[/p]` as nft encodes it: a shorter load on byte boundaries, else a mask over the address. */
function addressMatch(fam: NftFamily, offset: number, negate: boolean, cidr: string, form: Form): Attr[] | undefined {
  const [ip, bitsText] = cidr.split('/');
  const addr = address(fam, ip!);
  const len = FAMILY[fam].len;
  const bits = bitsText === undefined ? len * 8 : Number(bitsText);
  if (!addr || !Number.isInteger(bits) || bits < 0 || bits > len * 8) return undefined;
  const op = negate ? 1 : 0;
  if (bits > 0 && bits % 8 === 0) return [payload(1, offset, bits / 8), cmp(op, addr.subarray(0, bits / 8))];
  const mask = Buffer.alloc(len);
  for (let i = 0; i < len; i++)
    mask[i] = bits >= 8 * (i + 1) ? 0xff : bits <= 8 * i ? 0 : (0xff << (8 - (bits - 8 * i))) & 0xff;
  const masked = Buffer.from(addr.map((o, i) => o & mask[i]!));
  const bool: Attr[] = form === 'dump' ? [[6, u32(0)]] : []; // NFTA_BITWISE_OP: NFT_BITWISE_BOOL
  return [
    payload(1, offset, len),
    expr('bitwise', [
      [1, u32(REG_1)],
      [2, u32(REG_1)],
      [3, u32(len)],
      ...bool,
      [4, value(mask)],
      [5, value(Buffer.alloc(len))],
    ]),
    cmp(op, masked),
  ];
}

/** A rule's expressions, or undefined for a shape not known here. */
export function ruleExpressions(rule: string, form: Form = 'send', fam: NftFamily = 'ip'): Attr[] | undefined {
  const t = rule.split(' ');
  const f = FAMILY[fam];
  const out: Attr[] = [];
  let l4: string | undefined;
  let i = 0;
  while (i < t.length) {
    const w = t[i]!;
    if (w === fam && (t[i + 1] === 'saddr' || t[i + 1] === 'daddr')) {
      const negate = t[i + 2] === '!=';
      const m = addressMatch(
        fam,
        t[i + 1] === 'saddr' ? f.saddr : f.daddr,
        negate,
        t[i + (negate ? 3 : 2)] ?? '',
        form,
      );
      if (!m) return undefined;
      out.push(...m);
      i += negate ? 4 : 3;
    } else if (PROTO[w] !== undefined && t[i + 1] === 'dport') {
      const p = port(t[i + 2] ?? '');
      if (p === undefined || l4 !== undefined) return undefined;
      out.push(metaL4proto(), cmp(0, Buffer.from([PROTO[w]!])), payload(2, 2, 2), cmp(0, be16(p)));
      l4 = w;
      i += 3;
    } else if (w === 'meta' && t[i + 1] === 'l4proto' && PROTO[t[i + 2] ?? ''] !== undefined) {
      if (l4 !== undefined) return undefined;
      out.push(metaL4proto(), cmp(0, Buffer.from([PROTO[t[i + 2]!]!])));
      l4 = t[i + 2];
      i += 3;
    } else if (w === 'numgen' && t[i + 1] === 'random' && t[i + 2] === 'mod' && t[i + 4] === '==' && t[i + 5] === '0') {
      const mod = Number(t[i + 3]);
      if (!Number.isInteger(mod) || mod < 1) return undefined;
      out.push(
        expr('numgen', [
          [1, u32(REG_1)],
          [2, u32(mod)],
          [3, u32(1)],
          [4, u32(0)],
        ]),
        cmp(0, Buffer.alloc(4)),
      );
      i += 6;
    } else break;
  }
  const rest = t.slice(i);
  const slot =
    rest.length === 11 &&
    rest[0] === 'dnat' &&
    rest[1] === fam &&
    rest[2] === 'to' &&
    rest.slice(3, 6).join(' ') === 'numgen random mod' &&
    rest[7] === 'offset' &&
    rest[9] === 'map'
      ? slotLookup(rest[6]!, rest[8]!, rest[10]!)
      : undefined;
  if (slot && l4 !== undefined) {
    // `dnat … to numgen random mod M offset B map @endpoint-slots-N`: the slot, in network order, looked up in the
    // map; its value is address then port (ip: reg 1 and the 32-bit reg 9 after it; ip6: regs 1 and 2).
    const protoReg = fam === 'ip' ? 9 : REG_2;
    out.push(
      expr('numgen', [
        [1, u32(REG_1)],
        [2, u32(slot.mod)],
        [3, u32(1)],
        [4, u32(slot.offset)],
      ]),
      expr('byteorder', [
        [1, u32(REG_1)],
        [2, u32(REG_1)],
        [3, u32(1)],
        [4, u32(4)],
        [5, u32(4)],
      ]),
      expr('lookup', [
        [1, str(slot.map)],
        [2, u32(REG_1)],
        [3, u32(REG_1)],
        ...(form === 'dump' ? [[5, u32(0)] as Attr] : []),
      ]),
    );
    if (form === 'send')
      out.push(
        expr('nat', [
          [1, u32(1)],
          [2, u32(f.nfproto)],
          [3, u32(REG_1)],
          [5, u32(protoReg)],
        ]),
      );
    else
      out.push(
        expr('nat', [
          [1, u32(1)],
          [2, u32(f.nfproto)],
          [3, u32(REG_1)],
          [4, u32(REG_1)],
          [5, u32(protoReg)],
          [6, u32(protoReg)],
          [7, u32(3)],
        ]),
      );
  } else if (rest.length === 1 && (rest[0] === 'drop' || rest[0] === 'return' || rest[0] === 'accept'))
    out.push(immediate(REG_VERDICT, verdictData(VERDICT[rest[0]])));
  else if (rest.length === 2 && (rest[0] === 'jump' || rest[0] === 'goto') && /^[\w./:-]+$/.test(rest[1]!))
    out.push(immediate(REG_VERDICT, verdictData(VERDICT[rest[0]], rest[1])));
  else if (rest.length === 4 && rest[0] === 'dnat' && rest[1] === fam && rest[2] === 'to' && l4 !== undefined) {
    // "a:p", or "[a]:p" for IPv6.
    const m = fam === 'ip' ? /^([^:]+):(\d+)$/.exec(rest[3]!) : /^\[([^\]]+)\]:(\d+)$/.exec(rest[3]!);
    const addr = m ? address(fam, m[1]!) : undefined;
    const pn = port(m?.[2] ?? '');
    if (!addr || pn === undefined) return undefined;
    out.push(immediate(REG_1, value(addr)), immediate(REG_2, value(be16(pn))));
    // NFT_NAT_DNAT, the family, addr_min reg 1, proto_min reg 2, NF_NAT_RANGE_PROTO_SPECIFIED (the kernel keeps
    // max = min and adds NF_NAT_RANGE_MAP_IPS).
    if (form === 'send')
      out.push(
        expr('nat', [
          [1, u32(1)],
          [2, u32(f.nfproto)],
          [3, u32(REG_1)],
          [5, u32(REG_2)],
          [7, u32(2)],
        ]),
      );
    else
      out.push(
        expr('nat', [
          [1, u32(1)],
          [2, u32(f.nfproto)],
          [3, u32(REG_1)],
          [4, u32(REG_1)],
          [5, u32(REG_2)],
          [6, u32(REG_2)],
          [7, u32(3)],
        ]),
      );
  } else return undefined;
  return out;
}

function slotLookup(
  mod: string,
  offset: string,
  map: string,
): { mod: number; offset: number; map: string } | undefined {
  const m = Number(mod);
  const o = Number(offset);
  if (
    !/^\d+$/.test(mod) ||
    !/^\d+$/.test(offset) ||
    m < 1 ||
    m > 0xffffffff ||
    o > 0xffffffff ||
    !/^@endpoint-slots-[a-z]+-\d+$/.test(map)
  )
    return undefined;
  return { mod: m, offset: o, map: map.slice(1) };
}

/** Key layouts of the maps and sets a partial sync changes: each field padded to 4 bytes. */
export const KEYS: Record<string, ('ip' | 'proto' | 'port')[]> = {
  [SERVICE_IPS]: ['ip', 'proto', 'port'],
  [NO_ENDPOINT_SERVICES]: ['ip', 'proto', 'port'],
  [FIREWALL_IPS]: ['ip', 'proto', 'port'],
  [SERVICE_NODEPORTS]: ['proto', 'port'],
  [NO_ENDPOINT_NODEPORTS]: ['proto', 'port'],
  [HAIRPIN]: ['ip', 'ip'],
};

/** The bytes of a key field: an address of the family, or 4 (a protocol or port, padded). */
export const fieldLength = (fam: NftFamily, f: 'ip' | 'proto' | 'port'): number => (f === 'ip' ? FAMILY[fam].len : 4);

function elementKey(fam: NftFamily, set: string, key: string): Buffer | undefined {
  const layout = KEYS[set];
  const parts = key.split(' . ');
  if (!layout || parts.length !== layout.length) return undefined;
  const out = Buffer.alloc(layout.reduce((n, f) => n + fieldLength(fam, f), 0));
  let at = 0;
  for (let i = 0; i < layout.length; i++) {
    const p = parts[i]!;
    if (layout[i] === 'ip') {
      const a = address(fam, p);
      if (!a) return undefined;
      a.copy(out, at);
    } else if (layout[i] === 'proto') {
      if (PROTO[p] === undefined) return undefined;
      out[at] = PROTO[p]!;
    } else {
      const n = port(p);
      if (n === undefined) return undefined;
      be16(n).copy(out, at);
    }
    at += fieldLength(fam, layout[i]!);
  }
  return out;
}

const NAME = '([\\w./:-]+)';
const patterns = (fam: NftFamily) => {
  const T = `${fam} ${TABLE}`;
  return {
    addChain: new RegExp(`^add chain ${T} ${NAME}$`),
    flushChain: new RegExp(`^flush chain ${T} ${NAME}$`),
    deleteChain: new RegExp(`^delete chain ${T} ${NAME}$`),
    addRule: new RegExp(`^add rule ${T} ${NAME} (.+)$`),
    addElement: new RegExp(
      `^add element ${T} ${NAME} \\{ ([^{}"]+?)(?: comment ("(?:[^"\\\\]|\\\\.)*"))?(?: : (drop|(?:goto|jump) [\\w./:-]+))? \\}$`,
    ),
    deleteElement: new RegExp(`^delete element ${T} ${NAME} \\{ ([^{}"]+) \\}$`),
    addSlot: new RegExp(`^add element ${T} (endpoint-slots-[a-z]+-\\d+) \\{ (\\d+)-(\\d+) : (\\S+) \\. (\\d+) \\}$`),
    deleteSlot: new RegExp(`^delete element ${T} (endpoint-slots-[a-z]+-\\d+) \\{ (\\d+)-(\\d+) \\}$`),
  };
};
const RE = { ip: patterns('ip'), ip6: patterns('ip6') };

/** An element's attributes: key, verdict, comment (userdata TLV NFTNL_UDATA_SET_ELEM_COMMENT). */
function element(fam: NftFamily, set: string, key: string, verdict?: string, comment?: string): Attr[] | undefined {
  const k = elementKey(fam, set, key);
  if (!k) return undefined;
  const isMap = set !== HAIRPIN;
  if (isMap !== (verdict !== undefined)) return undefined;
  const attrs: Attr[] = [[1, value(k)]];
  if (verdict) {
    const [v, chain] = verdict.split(' ') as ['drop' | 'goto' | 'jump', string | undefined];
    attrs.push([2, verdictData(VERDICT[v], chain)]);
  }
  if (comment !== undefined) {
    const c = Buffer.from(`${comment}\0`, 'utf8');
    if (c.length > 255) return undefined;
    attrs.push([6, Buffer.concat([Buffer.from([0, c.length]), c])]);
  }
  return [[1, attrs]];
}

const setElems = (set: string, elems: Attr[]): Attr[] => [
  [1, str(TABLE)],
  [2, str(set)],
  [3, elems],
];

/** NFTA_SET_ELEM_FLAGS: the element ends a range (an interval set holds a range as two elements). */
export const NFT_SET_ELEM_INTERVAL_END = 1;

/** A range of an endpoint-slots map as the kernel's interval set holds it: its start, then its (exclusive) end. */
function slotRange(lo: string, hi: string, data?: Buffer): Attr[] | undefined {
  const a = Number(lo);
  const b = Number(hi);
  if (!(a <= b) || b >= 0xffffffff) return undefined;
  return [
    [1, [[1, value(u32(a))], ...(data ? [[2, value(data)] as Attr] : [])]],
    [
      1,
      [
        [1, value(u32(b + 1))],
        [3, u32(NFT_SET_ELEM_INTERVAL_END)],
      ],
    ],
  ];
}

/** An endpoint's address and port as a slot's value: the address, then the port padded to 4 bytes. */
function slotValue(fam: NftFamily, ip: string, portText: string): Buffer | undefined {
  const a = address(fam, ip);
  const p = port(portText);
  if (!a || p === undefined) return undefined;
  const out = Buffer.alloc(a.length + 4);
  a.copy(out);
  out.writeUInt16BE(p, a.length);
  return out;
}

/** An element command line's parts: several lines for one set can share one message. */
interface ElementCommand {
  cmd: number;
  flags: number;
  set: string;
  elems: Attr[];
}

function elementCommand(line: string, fam: NftFamily): ElementCommand | undefined {
  const re = RE[fam];
  let m: RegExpExecArray | null;
  if ((m = re.addSlot.exec(line))) {
    const data = slotValue(fam, m[4]!, m[5]!);
    const elems = data && slotRange(m[2]!, m[3]!, data);
    return elems && { cmd: MSG.NEWSETELEM, flags: NLM_F_CREATE, set: m[1]!, elems };
  }
  if ((m = re.deleteSlot.exec(line))) {
    const elems = slotRange(m[2]!, m[3]!);
    return elems && { cmd: MSG.DELSETELEM, flags: 0, set: m[1]!, elems };
  }
  if ((m = re.addElement.exec(line))) {
    const comment = m[3] === undefined ? undefined : (JSON.parse(m[3]) as string);
    const elems = element(fam, m[1]!, m[2]!, m[4], comment);
    return elems && { cmd: MSG.NEWSETELEM, flags: NLM_F_CREATE, set: m[1]!, elems };
  }
  if ((m = re.deleteElement.exec(line))) {
    const k = elementKey(fam, m[1]!, m[2]!);
    return k && { cmd: MSG.DELSETELEM, flags: 0, set: m[1]!, elems: [[1, [[1, value(k)]]]] };
  }
  return undefined;
}

const elementMessage = (fam: NftFamily, e: ElementCommand): Buffer =>
  nftMsg(fam, e.cmd, e.flags, setElems(e.set, e.elems));

/** One command line as a message, or undefined when it is not one of the known shapes. */
export function commandMessage(line: string, fam: NftFamily = 'ip'): Buffer | undefined {
  const re = RE[fam];
  let m: RegExpExecArray | null;
  if ((m = re.addChain.exec(line)))
    return nftMsg(fam, MSG.NEWCHAIN, NLM_F_CREATE, [
      [1, str(TABLE)],
      [3, str(m[1]!)],
    ]);
  if ((m = re.flushChain.exec(line)))
    return nftMsg(fam, MSG.DELRULE, 0, [
      [1, str(TABLE)],
      [2, str(m[1]!)],
    ]);
  if ((m = re.deleteChain.exec(line)))
    return nftMsg(fam, MSG.DELCHAIN, 0, [
      [1, str(TABLE)],
      [3, str(m[1]!)],
    ]);
  if ((m = re.addRule.exec(line))) {
    const exprs = ruleExpressions(m[2]!, 'send', fam);
    return (
      exprs &&
      nftMsg(fam, MSG.NEWRULE, NLM_F_CREATE | NLM_F_APPEND, [
        [1, str(TABLE)],
        [2, str(m[1]!)],
        [4, exprs],
      ])
    );
  }
  const e = elementCommand(line, fam);
  return e && elementMessage(fam, e);
}

/** Elements per message when consecutive lines add to (or delete from) the same set: one ack and set lookup for all. */
const ELEMENTS_PER_MESSAGE = 256;

export interface EncodedTransaction {
  /** Begin, the command messages, end. */
  batch: Buffer[];
  /** For each command message, the index of its first line (for error messages). */
  firstLine: number[];
}

/**
 * A whole transaction as one batch (begin, commands, end), or undefined if any line is not known here. Consecutive
 * element lines of one set share a message: the kernel's cost of a batch is mostly per message, not per element.
 */
export function encodeTransaction(text: string, fam: NftFamily = 'ip'): EncodedTransaction | undefined {
  const lines = text.split('\n').filter((l) => l !== '');
  const msgs: Buffer[] = [];
  const firstLine: number[] = [];
  let run: { e: ElementCommand; line: number } | undefined;
  const endRun = (): void => {
    if (!run) return;
    msgs.push(elementMessage(fam, run.e));
    firstLine.push(run.line);
    run = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const e = elementCommand(lines[i]!, fam);
    if (e) {
      if (
        run &&
        run.e.cmd === e.cmd &&
        run.e.set === e.set &&
        run.e.elems.length + e.elems.length <= ELEMENTS_PER_MESSAGE
      )
        run.e.elems.push(...e.elems);
      else {
        endRun();
        run = { e, line: i };
      }
      continue;
    }
    endRun();
    const b = commandMessage(lines[i]!, fam);
    if (!b) return undefined;
    msgs.push(b);
    firstLine.push(i);
  }
  endRun();
  const batch = (type: number): Buffer => message(type, NLM_F_REQUEST, 0, NFNL_SUBSYS_NFTABLES, []);
  return { batch: [batch(NFNL_MSG_BATCH_BEGIN), ...msgs, batch(NFNL_MSG_BATCH_END)], firstLine };
}

/** Numbers a batch's messages from `seq` on (in place); the command messages are all but the first and last. */
export function numberBatch(batch: Buffer[], seq: number, pid: number): number[] {
  return batch.map((b, i) => {
    b.writeUInt32LE((seq + i) >>> 0, 8);
    b.writeUInt32LE(pid >>> 0, 12);
    return (seq + i) >>> 0;
  });
}

/** The whole messages of a datagram. */
export function messagesOf(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off + 16 <= buf.length;) {
    const len = buf.readUInt32LE(off);
    if (len < 16 || off + len > buf.length) break;
    out.push(buf.subarray(off, off + len));
    off += (len + 3) & ~3;
  }
  return out;
}

/** The (seq, errno) pairs of the NLMSG_ERROR messages in a datagram; errno 0 is an ack. */
export function parseAcks(buf: Buffer): { seq: number; errno: number }[] {
  return messagesOf(buf)
    .filter((m) => m.readUInt16LE(4) === 2 && m.length >= 20)
    .map((m) => ({ seq: m.readUInt32LE(8), errno: -m.readInt32LE(16) | 0 }));
}

/** The attributes in buf[start, end), in order: type (flags masked) and payload. */
export function attrList(buf: Buffer, start = 0, end = buf.length): [number, Buffer][] {
  const out: [number, Buffer][] = [];
  for (let a = start; a + 4 <= end;) {
    const len = buf.readUInt16LE(a);
    if (len < 4 || a + len > end) break;
    out.push([buf.readUInt16LE(a + 2) & 0x3fff, buf.subarray(a + 4, a + len)]);
    a += (len + 3) & ~3;
  }
  return out;
}

/** Attribute type → payload, of the attributes in buf[start, end). */
export const attrs = (buf: Buffer, start = 0, end = buf.length): Map<number, Buffer> =>
  new Map(attrList(buf, start, end));

/** A message's attributes: after the 16-byte header and the 4-byte nfgenmsg. */
export const messageAttrs = (m: Buffer): Map<number, Buffer> => attrs(m, 20, m.readUInt32LE(0));

/** A NUL-terminated string attribute. */
export const cstr = (b: Buffer | undefined): string => (b ? b.toString('utf8').replace(/\0+$/, '') : '');
