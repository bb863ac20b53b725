// Benchmark: kube-proxy sync cost. Full syncs at 1k, 5k and 10k services x 10
// endpoints (BENCH_SIZES), with render (our code) and iptables-restore (the
// kernel apply, the floor) timed separately; then, with the proxier watching
// a dev apiserver with 10k services, the time from one EndpointSlice update
// to the restore that put it in the kernel. Runs in a throwaway network
// namespace, once per iptables backend: nf_tables (Debian's default) and legacy.
// Run as root: npm run bench:proxy-sync
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { e2eSkipReason, REPO } from '../e2e/harness.js';
import { sh } from '../e2e/proc.js';
import { runBench } from './bench-node.js';

interface Result {
  backend: string;
  full: { services: number; endpoints: number; lines: number; bytes: number; renderMs: number; applyMs: number | null; overBudgetMs?: number }[];
  e2e: { services: number; firstSyncMs: number; firstRenderMs: number; firstApplyMs: number; updateToKernelMs: number[]; partial: { renderMs: number; applyMs: number }[] } | null;
}

function runIn(backend: string): Result {
  const netns = `tskube-bench-${randomBytes(3).toString('hex')}`;
  sh('ip', ['netns', 'add', netns]);
  try {
    sh('ip', ['link', 'set', 'lo', 'up'], { netns });
    const out = execFileSync('nsenter', [`--net=/run/netns/${netns}`, process.execPath, '--import', 'tsx', path.join(REPO, 'bench/proxy-sync-runner.ts'), backend], { cwd: REPO, encoding: 'utf8', maxBuffer: 16 << 20, timeout: 3_600_000, env: process.env });
    return JSON.parse(out.trim().split('\n').pop()!) as Result;
  } finally {
    sh('ip', ['netns', 'del', netns], { allowFail: true });
  }
}

const ms = (x: number): string => `${x.toFixed(0)} ms`;

function print(r: Result): void {
  process.stdout.write(`\n== iptables ${r.backend} backend ==\n`);
  process.stdout.write('services | endpoints | restore lines |     bytes | render p50 | iptables-restore p50 | render/apply\n');
  for (const f of r.full) {
    const apply = f.applyMs === null ? `> ${ms(f.overBudgetMs!)} (stopped)` : ms(f.applyMs);
    const ratio = f.applyMs === null ? '-' : (f.renderMs / f.applyMs).toFixed(3);
    process.stdout.write(`${String(f.services).padStart(8)} | ${String(f.endpoints).padStart(9)} | ${String(f.lines).padStart(13)} | ${String(f.bytes).padStart(9)} | ${ms(f.renderMs).padStart(10)} | ${apply.padStart(20)} | ${ratio.padStart(12)}\n`);
  }
  const e = r.e2e;
  if (!e) return;
  const lat = [...e.updateToKernelMs].sort((a, b) => a - b);
  process.stdout.write(`one-endpoint change at ${e.services} services (${e.services * 10} endpoints), proxier watching a dev apiserver:\n`);
  process.stdout.write(`  first (full) sync after the informers synced: ${ms(e.firstSyncMs)} (render ${ms(e.firstRenderMs)}, restore ${ms(e.firstApplyMs)})\n`);
  process.stdout.write(`  EndpointSlice update -> rule in the kernel: ${lat.map(ms).join(', ')} (median ${ms(lat[Math.floor(lat.length / 2)]!)})\n`);
  process.stdout.write(`  partial sync split: ${e.partial.map((p) => `render ${ms(p.renderMs)} + restore ${ms(p.applyMs)}`).join('; ')}\n`);
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  process.stdout.write(`kube-proxy sync: ${execFileSync('iptables', ['--version'], { encoding: 'utf8' }).trim()} is the system default\n`);
  for (const backend of (process.env.BENCH_BACKENDS ?? 'nft,legacy').split(',')) print(runIn(backend));
  process.stdout.write('\nrender = building the restore text from the snapshot (ours); restore = iptables-restore --noflush into the kernel (the floor).\n');
});
