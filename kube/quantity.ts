// resource.Quantity parsing (the subset needed to turn requests/limits into numbers).
const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const RE = /^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

/** Parses a quantity to a plain number; throws with a clear message on bad input. */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = RE.exec(q.trim());
  if (!m)
    throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2]);
  return base * (SUFFIX[m[3] ?? ''] ?? 1);
}

export function milliValue(q: string | number): number {
  return Math.ceil(parseQuantity(q) * 1000 - 1e-9);
}

/** A CPU amount in millicores as resource.NewMilliQuantity(DecimalSI) prints it: 250m, 1, 1500m. */
export function formatMilliCpu(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** Bytes as resource.NewQuantity(BinarySI) prints them: the largest power-of-1024 suffix that divides exactly (64Mi), else the plain number. */
export function formatBytes(n: number): string {
  if (n > -1024 && n < 1024) return String(n);
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let i = 0;
  while (i < suffixes.length - 1 && n % 1024 === 0 && n !== 0) {
    n /= 1024;
    i++;
  }
  return `${n}${suffixes[i]}`;
}
