// nftables object names as upstream's nftables proxier derives them: a
// "HASH8-ns/svc/proto/port" base (base32 of sha256 of the unhashed name),
// with "service-", "local-", "external-", "firewall-", "endpoint-" and
// "affinity-" prefixes. The "/" tells service objects from the fixed ones.
import { createHash } from 'node:crypto';

import { base32 } from '../iptables/chains.js';

export const TABLE = 'kube-proxy';

/** nft's NameLengthMax (256) less the longest prefix (16). */
const BASE_MAX = 256 - 16;

const memo = new Map<string, string>();
function hashAndTruncate(name: string): string {
  let out = memo.get(name);
  if (out === undefined) {
    if (memo.size >= 1 << 20) memo.clear();
    out = `${base32(createHash('sha256').update(name).digest()).slice(0, 8)}-${name}`;
    if (out.length > BASE_MAX) out = `${out.slice(0, BASE_MAX - 3)}...`;
    memo.set(name, out);
  }
  return out;
}

/** "ns/svc" and the port name of a ServicePortName string "ns/svc:port" (or "ns/svc"). */
function split(servicePortName: string): [string, string] {
  const i = servicePortName.indexOf(':');
  return i < 0 ? [servicePortName, ''] : [servicePortName.slice(0, i), servicePortName.slice(i + 1)];
}

/** "HASH-ns/svc/tcp/port" */
export function servicePortBase(servicePortName: string, protocol: string): string {
  const [svc, port] = split(servicePortName);
  return hashAndTruncate(`${svc}/${protocol.toLowerCase()}/${port}`);
}

/** "HASH-ns/svc/tcp/port__ip/port"; IPv6 colons become dots. */
export function endpointBase(servicePortName: string, protocol: string, ip: string, port: number): string {
  const [svc, p] = split(servicePortName);
  return hashAndTruncate(`${svc}/${protocol.toLowerCase()}/${p}__${ip.replaceAll(':', '.')}/${port}`);
}

/** Service and endpoint chains and affinity sets all carry a "/"; the fixed objects never do. */
export const isServiceObject = (name: string): boolean => name.includes('/');
