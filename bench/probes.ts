// Benchmark: probe timing and cost. N = 110 pods (BENCH_PODS), each with an
// httpGet readiness and a tcpSocket liveness probe at periodSeconds 1, for 60 s
// (BENCH_SECONDS), on real containerd. Prints the probe period error (actual
// interval - period) p50/p99/max, the kubelet's CPU share of one core and RSS,
// and the same figures for a bare script making the same probes (the floor).
// Run as root: npm run bench:probes
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { APP_IMAGE, REPO } from '../e2e/harness.js';
import { runBench, withBenchNode } from './bench-node.js';

const N = Number(process.env.BENCH_PODS ?? 110);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);

runBench(() =>
  withBenchNode(async (node) => {
    const out = execFileSync(
      'nsenter',
      [
        `--net=/run/netns/${node.netns}`,
        process.execPath,
        ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
        '--import',
        'tsx',
        path.join(REPO, 'bench/probes-runner.ts'),
        node.socket,
        node.dir,
        APP_IMAGE,
        String(N),
        String(SECONDS),
      ],
      {
        cwd: REPO,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        timeout: (SECONDS * 3 + 900) * 1000,
      },
    );
    const r = JSON.parse(out.trim().split('\n').pop()!);
    const row = (
      name: string,
      x: { p50: number; p99: number; max: number; runs: number; cpuPct: number; rssMiB: number },
      rss: boolean,
    ) =>
      `${name.padEnd(8)} | ${String(x.runs).padStart(9)} | ${x.p50.toFixed(1).padStart(10)} | ${x.p99.toFixed(1).padStart(10)} | ${x.max.toFixed(1).padStart(10)} | ${x.cpuPct.toFixed(1).padStart(12)}% | ${rss ? `${x.rssMiB.toFixed(1)} MiB` : '(same process)'}`;
    process.stdout.write(
      `probes: ${r.n} pods x (httpGet readiness + tcpSocket liveness), periodSeconds 1, ${r.seconds} s; containerd ${(await node.cri.version()).runtime_version}\n`,
    );
    process.stdout.write(`all ${r.n} pods ready ${(r.readyAfterMs / 1000).toFixed(1)} s after the kubelet started\n\n`);
    process.stdout.write('         | intervals | err p50 ms | err p99 ms | err max ms | CPU of 1 core | RSS\n');
    process.stdout.write(`${row('kubelet', r.kubelet, true)}\n${row('floor', r.floor, false)}\n\n`);
    process.stdout.write(
      `ratio kubelet/floor: CPU ${(r.kubelet.cpuPct / r.floor.cpuPct).toFixed(2)}, p99 error ${(r.kubelet.p99 / Math.max(r.floor.p99, 0.1)).toFixed(2)}\n`,
    );
    process.stdout.write(
      'error = time between two runs of the same probe minus the period. kubelet CPU includes its PLEG relist and status work; the floor is setInterval with bare http.get/net.connect.\n',
    );
    process.stdout.write(
      `goal: p99 error < 50 ms (${r.kubelet.p99 < 50 ? 'met' : 'NOT met'}), CPU < 10% of one core (${r.kubelet.cpuPct < 10 ? 'met' : 'NOT met'})\n`,
    );
  }),
);
