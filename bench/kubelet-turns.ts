// The figures a kubelet benchmark takes for one kubelet and one N, and how
// tskube's are set beside the upstream kubelet's: the table rows, the ratios
// and the issue's goals.
import { percentile } from './stats.js';

export type KubeletName = 'tskube' | 'upstream';

/** A kubelet a benchmark starts for each of its turns and stops after it. */
export interface KubeletRunner {
  name: KubeletName;
  /** Starts it; resolves with the PID to measure once it is ready. */
  start(): Promise<number>;
  stop(): Promise<void>;
}

export interface KubeletTurn {
  kubelet: KubeletName;
  n: number;
  /** ms from each pod's request to its container running. */
  lat: number[];
  /** CPU seconds the kubelet used from the request until all N were running. */
  cpuSec: number;
  /** Its share of one core over the following seconds, N pods running. */
  steadyPct: number;
  rssIdleKiB: number;
  rssKiB: number;
}

/** tskube / upstream for each figure the goals name (lower is better for all). */
export interface TurnRatios {
  n: number;
  p50: number;
  p99: number;
  cpuPerPod: number;
  rssIdle: number;
  rss: number;
}

export const KUBELET_GOALS = {
  rssIdle: 1,
  rss: 1,
  cpuPerPod: 1,
  p99: 1,
} as const;

export function ratios(t: KubeletTurn, u: KubeletTurn): TurnRatios {
  return {
    n: t.n,
    p50: percentile(t.lat, 50) / percentile(u.lat, 50),
    p99: percentile(t.lat, 99) / percentile(u.lat, 99),
    cpuPerPod: t.cpuSec / t.n / (u.cpuSec / u.n),
    rssIdle: t.rssIdleKiB / u.rssIdleKiB,
    rss: t.rssKiB / u.rssKiB,
  };
}

const ms = (x: number): string => `${x.toFixed(0)} ms`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

export const TURN_HEADER =
  '   N | kubelet  |      p50 |      p99 | CPU to N | CPU/pod | steady CPU | RSS idle | RSS at N';

export function turnRow(t: KubeletTurn): string {
  return [
    String(t.n).padStart(4),
    ` ${t.kubelet.padEnd(8)}`,
    ms(percentile(t.lat, 50)).padStart(9),
    ms(percentile(t.lat, 99)).padStart(9),
    `${t.cpuSec.toFixed(2)} s`.padStart(9),
    ms((t.cpuSec * 1000) / t.n).padStart(8),
    `${t.steadyPct.toFixed(1)} %`.padStart(11),
    mib(t.rssIdleKiB).padStart(9),
    mib(t.rssKiB).padStart(9),
  ].join(' |');
}

/** A ratio beside its goal: "(met)", or the goal it misses. */
export const mark = (x: number, goal: number): string =>
  `${x.toFixed(2)}× ${x <= goal ? '(met)' : `(goal ≤ ${goal}×)`}`;

/** One line of ratios for an N, each with its goal. */
export function ratioLine(r: TurnRatios): string {
  return `N=${r.n}: p50 ${r.p50.toFixed(2)}×, p99 ${mark(r.p99, KUBELET_GOALS.p99)}, CPU per pod ${mark(r.cpuPerPod, KUBELET_GOALS.cpuPerPod)}, RSS idle ${mark(r.rssIdle, KUBELET_GOALS.rssIdle)}, RSS at N ${mark(r.rss, KUBELET_GOALS.rss)}`;
}
