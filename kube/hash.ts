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

/** The value without null, empty objects and empty lists anywhere in it: how a Go struct reads them all. */
function dropEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropEmpty);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const y = dropEmpty(x);
    if (y === null || y === undefined) continue;
    if (Array.isArray(y) ? !y.length : typeof y === 'object' && !Object.keys(y as object).length) continue;
    out[k] = y;
  }
  return out;
}

/**
 * Canonical JSON of a value as Go's semantic equality compares decoded structs: key order aside, and an empty object or
 * list the same as none (a protobuf body decodes in field-number order and without empty messages).
 */
export function semanticJson(v: unknown): string {
  return canonicalJson(dropEmpty(v));
}
