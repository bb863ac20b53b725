// Benchmark: kube-proxy sync cost, nftables mode against iptables mode, in one
// run. In a throwaway network namespace per mode, a dev apiserver holds 1k,
// 10k and 30k Services × 10 endpoints (BENCH_SIZES) and the real proxy runs
// in its own process: cold start, one-endpoint change from the EndpointSlice
// update to the rule in the kernel (median of 15; 5 in iptables mode), restart over its own rules,
// RSS and CPU. Modes: BENCH_MODES (default nftables,legacy: iptables mode on
// iptables-legacy, the fast iptables baseline; "nft" is iptables mode on
// iptables-nft, which takes minutes from a few thousand Services).
// Run as root: npm run bench:proxy-sync
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { e2eSkipReason, REPO } from '../e2e/harness.js';
import { sh } from '../e2e/proc.js';
import { runBench } from './bench-node.js';

interface Row {
  services: number;
  coldMs: number | null;
  overBudgetMs?: number;
  coldSyncMs: number;
  coldCpuMs: number;
  coldChildCpuMs: number;
  changeMs: number[];
  /** The floor of a change (nftables mode): the same updates seen by a bare watcher. */
  floorMs: number[];
  /** The floor from a watcher grown to the proxy's resident size (ConfigMap updates, in turns with the changes), and that size. */
  sizedFloorMs: number[];
  sizedFloorRssMiB: number;
  splits: {
    renderMs: number;
    applyMs: number;
    requestMs: number;
    toProxierMs: number;
    toSyncMs: number;
    apiserverGcMs: number;
  }[];
  changeCpuMs: number;
  /** Of it, garbage collection, and major collections per change. */
  changeGcMs: number;
  changeGcMajor: number;
  changeChildCpuMs: number;
  rssMiB: number;
  restartMs: number;
  restartSyncMs: number;
}
interface Result {
  mode: string;
  rows: Row[];
}

function runIn(mode: string): Result {
  const netns = `tskube-bench-${randomBytes(3).toString('hex')}`;
  sh('ip', ['netns', 'add', netns]);
  try {
    sh('ip', ['link', 'set', 'lo', 'up'], { netns });
    const out = execFileSync(
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
        env: process.env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
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
};

function print(r: Result): void {
  process.stdout.write(`\n== ${LABEL[r.mode] ?? r.mode} ==\n`);
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
    const gcPart = `GC ${ms(f.changeGcMs)} (${f.changeGcMajor.toFixed(1)} major)`;
    const m = (k: keyof Row['splits'][number]): string => ms(median(f.splits.map((s) => s[k])));
    const inSync = `render ${m('renderMs')} + apply ${m('applyMs')}; ${gcPart} per change; update request ${m('requestMs')}, update to the proxier's handler ${m('toProxierMs')}, update to sync start ${m('toSyncMs')} (apiserver GC ${m('apiserverGcMs')})`;
    const cpu = `${ms(f.changeCpuMs)}+${ms(f.changeChildCpuMs)}`;
    process.stdout.write(
      `${String(f.services).padStart(8)} | ${cold.padStart(16)} | ${change.padEnd(32)} | ${cpu.padStart(22)} | ${`${ms(f.restartMs)} (${ms(f.restartSyncMs)})`.padStart(17)} | ${`${ms(f.coldCpuMs)}+${ms(f.coldChildCpuMs)}`.padStart(20)} | ${f.rssMiB.toFixed(0).padStart(3)} MiB | ${inSync}\n`,
    );
  }
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  process.stdout.write(
    `kube-proxy sync: ${execFileSync('nft', ['--version'], { encoding: 'utf8' }).trim()}, ${execFileSync('iptables-legacy', ['--version'], { encoding: 'utf8' }).trim()}\n`,
  );
  const results = (process.env.BENCH_MODES ?? 'nftables,legacy').split(',').map(runIn);
  results.forEach(print);
  const nft = results.find((r) => r.mode === 'nftables');
  const ipt = results.find((r) => r.mode === 'legacy') ?? results.find((r) => r.mode === 'nft');
  if (!nft) return;
  const ok = (r: Row | undefined): r is Row => !!r && r.coldMs !== null;
  process.stdout.write('\n== nftables mode: goals and ratios ==\n');
  const first = nft.rows.find(ok);
  const last = [...nft.rows].reverse().find(ok);
  for (const row of nft.rows.filter(ok)) {
    const base = ipt?.rows.find((x) => x.services === row.services);
    const ratio = (a: number, b: number | undefined): string => (b ? (a / b).toFixed(2) : '-');
    process.stdout.write(
      `${String(row.services).padStart(6)} services: change median ${ms(median(row.changeMs))} (goal < 20 ms: ${median(row.changeMs) < 20 ? 'met' : 'NOT met'}); floor ${ms(median(row.floorMs))} (${all(row.floorMs)}); floor at the proxy's ${row.sizedFloorRssMiB.toFixed(0)} MiB ${ms(median(row.sizedFloorMs))} (${all(row.sizedFloorMs)}); nftables/${ipt ? ipt.mode : '?'} change ${ratio(median(row.changeMs), ok(base) ? median(base.changeMs) : undefined)}, cold ${ratio(row.coldMs!, ok(base) ? base.coldMs! : undefined)}, RSS ${ratio(row.rssMiB, ok(base) ? base.rssMiB : undefined)}\n`,
    );
  }
  if (first && last && first !== last) {
    const flat = median(last.changeMs) / median(first.changeMs);
    const floorFlat = median(last.floorMs) / median(first.floorMs);
    const sizedFlat = median(last.sizedFloorMs) / median(first.sizedFloorMs);
    const above = (r: Row): number => median(r.changeMs) - median(r.sizedFloorMs);
    process.stdout.write(
      `change-time(${last.services}) / change-time(${first.services}) = ${flat.toFixed(2)} (goal ≤ 1.5: ${flat <= 1.5 ? 'met' : 'NOT met'}); the small floor's: ${floorFlat.toFixed(2)}; the proxy-sized floor's: ${sizedFlat.toFixed(2)}; change above the proxy-sized floor: ${ms(above(first))} → ${ms(above(last))}\n`,
    );
  }
  const at10k = nft.rows.find((r) => r.services === 10_000);
  if (ok(at10k))
    process.stdout.write(
      `cold start at 10,000 Services: ${ms(at10k.coldMs!)} (goal < 10 s: ${at10k.coldMs! < 10_000 ? 'met' : 'NOT met'})\n`,
    );
  process.stdout.write(
    "\ncold start = proxy process start to the end of its first full sync, with no rules in the kernel (sync = the sync alone); change = EndpointSlice update request to the end of the sync that wrote it; floor = the same kind of update request to its event at a bare watcher: in a small process before the proxy starts, and, in turns with the proxy's changes (ConfigMap updates the proxy does not see), in one grown to the proxy's resident size with a buffer it never touches (on some VMs waking an idle process costs time that grows with its resident memory); restart = a new proxy over the rules the last one left.\n",
  );
});
