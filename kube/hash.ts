import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal objects always hash the same. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) => {
    if (val && typeof val === 'object' && !Array.isArray(val)) {
      const o = val as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]),
      );
    }
    return val;
  });
}

export function md5Hex(...parts: string[]): string {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/** FNV-1a 32-bit, as upstream uses for container hashes; printed in hex. */
export function fnv32aHex(s: string): string {
  let h = 0x811c9dc5;
  const buf = Buffer.from(s, 'utf8');
  for (const b of buf) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}
