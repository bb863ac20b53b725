// resource.Quantity parsing (the subset needed to turn requests/limits into numbers).
const SUFFIX: Record<string, number> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
const RE = /^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

/** Parses a quantity to a plain number; throws with a clear message on bad input. */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = RE.exec(q.trim());
  if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2]);
  return base * (SUFFIX[m[3] ?? ''] ?? 1);
}

export function milliValue(q: string | number): number {
  return Math.ceil(parseQuantity(q) * 1000 - 1e-9);
}
