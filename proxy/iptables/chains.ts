// iptables chain names as upstream kube-proxy derives them: the first 16
// characters of base32(sha256(servicePortName + protocol [+ "ip:port"])).
import { createHash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (standard alphabet), as Go's base32.StdEncoding. */
export function base32(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Chain names are asked for on every sync: remember them (bounded, dropped all at once when full). */
const memo = new Map<string, string>();
const MEMO_MAX = 1 << 20;
function hash16(s: string): string {
  let h = memo.get(s);
  if (h === undefined) {
    if (memo.size >= MEMO_MAX) memo.clear();
    h = base32(createHash('sha256').update(s).digest()).slice(0, 16);
    memo.set(s, h);
  }
  return h;
}

/** portProtoHash(servicePortName, lower-case protocol). */
export const portProtoHash = (servicePortName: string, protocol: string): string =>
  hash16(servicePortName + protocol.toLowerCase());

export const svcChain = (name: string, proto: string): string => `KUBE-SVC-${portProtoHash(name, proto)}`;
export const svlChain = (name: string, proto: string): string => `KUBE-SVL-${portProtoHash(name, proto)}`;
export const extChain = (name: string, proto: string): string => `KUBE-EXT-${portProtoHash(name, proto)}`;
export const fwChain = (name: string, proto: string): string => `KUBE-FW-${portProtoHash(name, proto)}`;
export const sepChain = (name: string, proto: string, endpoint: string): string =>
  `KUBE-SEP-${hash16(name + proto.toLowerCase() + endpoint)}`;

const SERVICE_CHAIN_PREFIXES = ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-SEP-', 'KUBE-FW-', 'KUBE-EXT-'];
export const isServiceChain = (chain: string): boolean => SERVICE_CHAIN_PREFIXES.some((p) => chain.startsWith(p));

// The top-level chains.
export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
export const KUBE_FIREWALL = 'KUBE-FIREWALL';

/** Jumps from the built-in chains into ours (upstream iptablesJumpChains, plus kubelet's KUBE-FIREWALL). */
export interface JumpRule {
  table: 'filter' | 'nat';
  src: string;
  dst: string;
  comment: string;
  extra: string[];
}

const NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];
export const JUMP_RULES: JumpRule[] = [
  {
    table: 'filter',
    src: 'INPUT',
    dst: KUBE_EXTERNAL_SERVICES,
    comment: 'kubernetes externally-visible service portals',
    extra: NEW,
  },
  {
    table: 'filter',
    src: 'FORWARD',
    dst: KUBE_EXTERNAL_SERVICES,
    comment: 'kubernetes externally-visible service portals',
    extra: NEW,
  },
  { table: 'filter', src: 'INPUT', dst: KUBE_NODEPORTS, comment: 'kubernetes health check service ports', extra: [] },
  { table: 'filter', src: 'FORWARD', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: NEW },
  { table: 'filter', src: 'OUTPUT', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: NEW },
  { table: 'filter', src: 'FORWARD', dst: KUBE_FORWARD, comment: 'kubernetes forwarding rules', extra: [] },
  { table: 'filter', src: 'INPUT', dst: KUBE_PROXY_FIREWALL, comment: 'kubernetes load balancer firewall', extra: NEW },
  {
    table: 'filter',
    src: 'OUTPUT',
    dst: KUBE_PROXY_FIREWALL,
    comment: 'kubernetes load balancer firewall',
    extra: NEW,
  },
  {
    table: 'filter',
    src: 'FORWARD',
    dst: KUBE_PROXY_FIREWALL,
    comment: 'kubernetes load balancer firewall',
    extra: NEW,
  },
  { table: 'nat', src: 'OUTPUT', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', src: 'PREROUTING', dst: KUBE_SERVICES, comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', src: 'POSTROUTING', dst: KUBE_POSTROUTING, comment: 'kubernetes postrouting rules', extra: [] },
  { table: 'filter', src: 'INPUT', dst: KUBE_FIREWALL, comment: '', extra: [] },
  { table: 'filter', src: 'OUTPUT', dst: KUBE_FIREWALL, comment: '', extra: [] },
];

/** The rule arguments of a jump, as given to `iptables -C/-I <src> ...`. */
export const jumpArgs = (j: JumpRule): string[] => [
  ...j.extra,
  ...(j.comment ? ['-m', 'comment', '--comment', j.comment] : []),
  '-j',
  j.dst,
];
