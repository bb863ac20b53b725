// Pure: digests of service chains' rules as the kernel dumps them, so a full
// sync can tell, without listing rules through nft (minutes at scale), which
// chains the kernel already has exactly as they should be.
import { createHash } from 'node:crypto';
import { encodeAttrs, message, NFNL_SUBSYS_NFTABLES, NFPROTO_IPV4, NLM_F_REQUEST, ruleExpressions, str } from './netlink-encode.js';
import { TABLE } from './names.js';

/** Hashes rules in order, each as (expressions, userdata) the way the kernel dumps them. */
export class RuleHasher {
  private readonly h = createHash('sha1');
  add(expressions: Buffer, userdata: Buffer = Buffer.alloc(0)): void {
    const len = Buffer.alloc(8);
    len.writeUInt32LE(expressions.length, 0);
    len.writeUInt32LE(userdata.length, 4);
    this.h.update(len).update(expressions).update(userdata);
  }
  digest(): string {
    return this.h.digest('base64');
  }
}

/** What the kernel holds for a chain with no rules. */
export const EMPTY_CHAIN_DIGEST = new RuleHasher().digest();

/** The digest a chain with these rules dumps as, or undefined when a rule is not one known here (rewrite it). */
export function chainDigest(rules: readonly string[]): string | undefined {
  const h = new RuleHasher();
  for (const r of rules) {
    const e = ruleExpressions(r, 'dump');
    if (!e) return undefined;
    h.add(encodeAttrs(e, true));
  }
  return h.digest();
}

/**
 * The request for the rules of one chain of our table (NFT_MSG_GETRULE, NLM_F_DUMP). One chain at a time: the kernel
 * resumes a dump of the whole table by walking it from the start for every datagram, quadratic at 100k rules.
 */
export function ruleDumpRequest(seq: number, chain: string): Buffer {
  const b = message((NFNL_SUBSYS_NFTABLES << 8) | 7, NLM_F_REQUEST | 0x300, NFPROTO_IPV4, 0, [[1, str(TABLE)], [2, str(chain)]]);
  b.writeUInt32LE(seq >>> 0, 8);
  return b;
}

/** Folds one NEWRULE message of a dump into its chain's hasher. */
export function foldRule(m: Buffer, chains: Map<string, RuleHasher>): void {
  let chain = '';
  let exprs: Buffer = Buffer.alloc(0);
  let userdata: Buffer = Buffer.alloc(0);
  const end = m.readUInt32LE(0);
  for (let a = 20; a + 4 <= end; ) {
    const alen = m.readUInt16LE(a);
    if (alen < 4) break;
    const t = m.readUInt16LE(a + 2) & 0x3fff;
    const v = m.subarray(a + 4, a + alen);
    if (t === 2) chain = v.toString('utf8').replace(/\0$/, '');
    else if (t === 4) exprs = v;
    else if (t === 7) userdata = v;
    a += (alen + 3) & ~3;
  }
  let h = chains.get(chain);
  if (!h) chains.set(chain, (h = new RuleHasher()));
  h.add(exprs, userdata);
}

export function digests(chains: Map<string, RuleHasher>): Map<string, string> {
  return new Map([...chains].map(([c, h]) => [c, h.digest()]));
}
