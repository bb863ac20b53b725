// Go time.ParseDuration for flags and config fields ("20s", "1m30s", "500ms").
const UNIT: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(s: string): number {
  if (s === '0') return 0;
  const re = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * UNIT[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos !== s.length || s.length === 0) throw new Error(`invalid duration "${s}"`);
  return total;
}
