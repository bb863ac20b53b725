// Pure: digests of service chains' rules as the kernel dumps them, so a full
// sync can tell, without listing rules through nft (minutes at scale), which
// chains the kernel already has exactly as they should be.
import { createHash } from 'node:crypto';

import { cstr, encodeAttrs, messageAttrs, type NftFamily, ruleExpressions } from './netlink-encode.js';

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
export function chainDigest(rules: readonly string[], fam: NftFamily = 'ip'): string | undefined {
  const h = new RuleHasher();
  for (const r of rules) {
    const e = ruleExpressions(r, 'dump', fam);
    if (!e) return undefined;
    h.add(encodeAttrs(e, true));
  }
  return h.digest();
}

/** Folds one NEWRULE message of a dump into its chain's hasher. */
export function foldRule(m: Buffer, chains: Map<string, RuleHasher>): void {
  const a = messageAttrs(m); // NFTA_RULE_CHAIN, _EXPRESSIONS, _USERDATA
  const chain = cstr(a.get(2));
  let h = chains.get(chain);
  if (!h) chains.set(chain, (h = new RuleHasher()));
  h.add(a.get(4) ?? Buffer.alloc(0), a.get(7));
}

export function digests(chains: Map<string, RuleHasher>): Map<string, string> {
  return new Map([...chains].map(([c, h]) => [c, h.digest()]));
}
