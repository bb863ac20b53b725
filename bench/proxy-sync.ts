// Benchmark: kube-proxy sync cost, nftables mode against iptables mode, and
// tskube's proxy against the upstream kube-proxy (the fixture), in one run. In a throwaway network namespace per mode, a dev apiserver holds 1k,
// 10k and 30k Services × 10 endpoints (BENCH_SIZES) and the real proxy runs
// in its own process: cold start, one-endpoint change from the EndpointSlice
// update to the rule in the kernel (median of 15; 5 in iptables mode), restart over its own rules,
// RSS and CPU. Modes: BENCH_MODES (default nftables,legacy: iptables mode on
// iptables-legacy, the fast iptables baseline; "nft" is iptables mode on
// iptables-nft, which takes minutes from a few thousand Services; upstream-nftables and
// upstream-legacy are the upstream kube-proxy's, included by default when its fixture is built).
// Run as root: npm run bench:proxy-sync
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { e2eSkipReason, REPO } from '../e2e/harness.js';
import { sh } from '../e2e/proc.js';
import { upstreamDir } from '../scripts/upstream-plan.js';
import { runBench } from './bench-node.js';

const UPSTREAM_PROXY = path.join(upstreamDir(), 'kube-proxy');

interface Row {
  services: number;
  coldMs: number | null;
  overBudgetMs?: number;
  coldSyncMs: number;
  // The floors and splits below are tskube's only (the upstream proxy is measured from the outside).
  coldCpuMs: number;
  coldChildCpuMs: number;
  changeMs: number[];
  /** The floor of a change (nftables mode): the same updates seen by a bare watcher. */
  floorMs?: number[];
  /** The floor from a watcher grown to the proxy's resident size (ConfigMap updates, in turns with the changes), and that size. */
  sizedFloorMs?: number[];
  sizedFloorRssMiB?: number;
  splits?: {
    renderMs: number;
    applyMs: number;
    requestMs: number;
    toProxierMs: number;
    toSyncMs: number;
    apiserverGcMs: number;
  }[];
  changeCpuMs: number;
  /** Of it, garbage collection, and major collections per change. */
  changeGcMs?: number;
  changeGcMajor?: number;
  changeChildCpuMs: number;
  rssMiB: number;
  /** null: over the budget (the upstream proxy at 30k). */
  restartMs: number | null;
  restartSyncMs: number | null;
}
interface Result {
  mode: string;
  rows: Row[];
  /** The runner failed: what it said (the other modes still run). */
  error?: string;
}

function runIn(mode: string): Result {
  const netns = `tskube-bench-${randomBytes(3).toString('hex')}`;
  sh('ip', ['netns', 'add', netns]);
  try {
    sh('ip', ['link', 'set', 'lo', 'up'], { netns });
    let out: string;
    try {
      out = execFileSync(
        'nsenter',
        [
          `--net=/run/netns/${netns}`,
          process.execPath,
          '--import',
          'tsx',
          path.join(REPO, 'bench/proxy-sync-runner.ts'),
          mode,
        ],
        {
          cwd: REPO,
          encoding: 'utf8',
          maxBuffer: 16 << 20,
          timeout: 3_600_000,
          env: { ...process.env, BENCH_UPSTREAM_PROXY: UPSTREAM_PROXY },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
    } catch (e) {
      // The runner prints its rows after each size: keep those measured before it failed.
      const last = String((e as { stdout?: string }).stdout ?? '')
        .trim()
        .split('\n')
        .pop();
      const partial = last ? (JSON.parse(last) as Result) : { mode, rows: [] };
      return { ...partial, error: (e as Error).message.split('\n')[0] };
    }
    return JSON.parse(out.trim().split('\n').pop()!) as Result;
  } finally {
    sh('ip', ['netns', 'del', netns], { allowFail: true });
  }
}

const ms = (x: number): string => `${x < 10 ? x.toFixed(1) : x.toFixed(0)} ms`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const all = (xs: number[]): string => xs.map((x) => x.toFixed(1)).join(', ');
const LABEL: Record<string, string> = {
  nftables: 'nftables mode',
  legacy: 'iptables mode (iptables-legacy)',
  nft: 'iptables mode (iptables-nft)',
  'upstream-nftables': 'upstream kube-proxy, nftables mode',
  'upstream-legacy': 'upstream kube-proxy, iptables mode (iptables-legacy)',
};

function print(r: Result): void {
  process.stdout.write(`\n== ${LABEL[r.mode] ?? r.mode} ==\n`);
  if (r.error) process.stdout.write(`failed: ${r.error}\n`);
  process.stdout.write(
    "services | cold start (sync) | change median (all)              | CPU/change (own+child) | restart (sync)    | cold CPU (own+child) |   RSS   | change inside the proxy (median); the update request, and its start to the sync's (apiserver, watch, proxy)\n",
  );
  for (const f of r.rows) {
    if (f.coldMs === null) {
      process.stdout.write(`${String(f.services).padStart(8)} | > ${ms(f.overBudgetMs!)} (stopped)\n`);
      continue;
    }
    const cold = `${ms(f.coldMs)} (${ms(f.coldSyncMs)})`;
    const change = `${ms(median(f.changeMs))} (${all(f.changeMs)})`;
    const m = (k: keyof NonNullable<Row['splits']>[number]): string => ms(median(f.splits!.map((s) => s[k])));
    const inSync = f.splits
      ? `render ${m('renderMs')} + apply ${m('applyMs')}; GC ${ms(f.changeGcMs!)} (${f.changeGcMajor!.toFixed(1)} major) per change; update request ${m('requestMs')}, update to the proxier's handler ${m('toProxierMs')}, update to sync start ${m('toSyncMs')} (apiserver GC ${m('apiserverGcMs')})`
      : '';
    const cpu = `${ms(f.changeCpuMs)}+${ms(f.changeChildCpuMs)}`;
    process.stdout.write(
      `${String(f.services).padStart(8)} | ${cold.padStart(16)} | ${change.padEnd(32)} | ${cpu.padStart(22)} | ${(f.restartMs === null ? '> budget' : `${ms(f.restartMs)} (${ms(f.restartSyncMs!)})`).padStart(17)} | ${`${ms(f.coldCpuMs)}+${ms(f.coldChildCpuMs)}`.padStart(20)} | ${f.rssMiB.toFixed(0).padStart(3)} MiB | ${inSync}\n`,
    );
  }
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  process.stdout.write(
    `kube-proxy sync: ${execFileSync('nft', ['--version'], { encoding: 'utf8' }).trim()}, ${execFileSync('iptables-legacy', ['--version'], { encoding: 'utf8' }).trim()}\n`,
  );
  const haveUpstream = fs.existsSync(UPSTREAM_PROXY);
  if (!haveUpstream)
    process.stdout.write(
      `upstream columns skipped: no upstream kube-proxy at ${UPSTREAM_PROXY} (npm run upstream -- build kube-proxy builds it)\n`,
    );
  const modes = process.env.BENCH_MODES?.split(',') ?? [
    'nftables',
    'legacy',
    ...(haveUpstream ? ['upstream-nftables', 'upstream-legacy'] : []),
  ];
  const results = modes.map(runIn);
  results.forEach(print);
  const ok = (r: Row | undefined): r is Row => !!r && r.coldMs !== null;
  const byMode = (m: string): Result | undefined => results.find((r) => r.mode === m);
  // tskube / upstream per mode and size, with the goals of issue 49 beside them.
  const goal = (x: number, max: number, applies: boolean): string =>
    applies ? ` (goal ≤ ${max}: ${x <= max ? 'met' : `NOT met, ${(x / max).toFixed(1)}× over`})` : '';
  for (const [mode, limit] of [
    ['nftables', 0.1],
    ['legacy', 0.5],
  ] as const) {
    const t = byMode(mode);
    const u = byMode(`upstream-${mode}`);
    if (!t || !u) continue;
    process.stdout.write(`\n== ${LABEL[mode]}: tskube / upstream ==\n`);
    for (const row of t.rows.filter(ok)) {
      const base = u.rows.find((x) => x.services === row.services);
      const big = row.services >= 10_000;
      if (!ok(base)) {
        process.stdout.write(`${String(row.services).padStart(6)} services: upstream did not finish its cold start\n`);
        continue;
      }
      const change = median(row.changeMs) / median(base.changeMs);
      const cold = row.coldMs! / base.coldMs!;
      const rss = row.rssMiB / base.rssMiB;
      const cpu = (row.changeCpuMs + row.changeChildCpuMs) / (base.changeCpuMs + base.changeChildCpuMs);
      process.stdout.write(
        `${String(row.services).padStart(6)} services: change ${change.toFixed(2)}×${goal(change, limit, big)}, cold start ${cold.toFixed(2)}×${goal(cold, limit, big)}, RSS ${rss.toFixed(2)}×${goal(rss, 1, row.services >= 30_000)}, CPU per change ${cpu.toFixed(2)}×; upstream: change ${ms(median(base.changeMs))}, cold ${ms(base.coldMs!)}, ${base.rssMiB.toFixed(0)} MiB\n`,
      );
    }
  }
  const nft = byMode('nftables');
  const ipt = byMode('legacy') ?? byMode('nft');
  if (nft) {
    process.stdout.write('\n== nftables mode: floors, and against iptables mode ==\n');
    for (const row of nft.rows.filter(ok)) {
      const base = ipt?.rows.find((x) => x.services === row.services);
      const ratio = (a: number, b: number | undefined): string => (b ? (a / b).toFixed(2) : '-');
      process.stdout.write(
        `${String(row.services).padStart(6)} services: change median ${ms(median(row.changeMs))}; floor ${ms(median(row.floorMs!))} (${all(row.floorMs!)}); floor at the proxy's ${row.sizedFloorRssMiB!.toFixed(0)} MiB ${ms(median(row.sizedFloorMs!))} (${all(row.sizedFloorMs!)}); nftables/${ipt ? ipt.mode : '?'} change ${ratio(median(row.changeMs), ok(base) ? median(base.changeMs) : undefined)}, cold ${ratio(row.coldMs!, ok(base) ? base.coldMs! : undefined)}, RSS ${ratio(row.rssMiB, ok(base) ? base.rssMiB : undefined)}\n`,
      );
    }
  }
  process.stdout.write(
    "\ncold start = proxy process start to the end of its first full sync, with no rules in the kernel (sync = the sync alone); change = EndpointSlice update request to the end of the sync that wrote it; floor = the same kind of update request to its event at a bare watcher: in a small process before the proxy starts, and, in turns with the proxy's changes (ConfigMap updates the proxy does not see), in one grown to the proxy's resident size with a buffer it never touches (on some VMs waking an idle process costs time that grows with its resident memory); restart = a new proxy over the rules the last one left. The upstream kube-proxy runs with the same apiserver, mode, cluster CIDR and sync periods; its times are its own sync timestamps (metrics, protobuf format), its RSS and CPU from /proc; it also runs its IPv6 proxier, as a user's would.\n",
  );
});
