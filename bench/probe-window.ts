// The figures of a probe benchmark window, from when each probe arrived.
import { percentile } from './stats.js';

export interface ProbeWindow {
  /** Intervals measured (pairs of consecutive arrivals of one probe inside the window). */
  runs: number;
  /** Interval minus the period, ms. */
  p50: number;
  p99: number;
  max: number;
  /** The prober's CPU share of one core over the window, and its median RSS. */
  cpuPct: number;
  rssMiB: number;
}

/** Period errors of every probe's arrivals in [from, to), with the prober's CPU and RSS samples over it. */
export function probeWindow(
  arrivals: Map<string, number[]>,
  periodMs: number,
  from: number,
  to: number,
  prober: { cpuSec: number; rssKiB: number[] },
): ProbeWindow {
  const errors: number[] = [];
  for (const ts of arrivals.values()) {
    const w = ts.filter((t) => t >= from && t < to);
    for (let i = 1; i < w.length; i++) errors.push(w[i]! - w[i - 1]! - periodMs);
  }
  return {
    runs: errors.length,
    p50: percentile(errors, 50),
    p99: percentile(errors, 99),
    max: errors.length ? Math.max(...errors) : NaN,
    cpuPct: (prober.cpuSec / ((to - from) / 1000)) * 100,
    rssMiB: percentile(prober.rssKiB, 50) / 1024,
  };
}
