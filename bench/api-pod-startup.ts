// Benchmark: API pod startup latency, the upstream SLI: from a pod's
// creationTimestamp to all its containers running, as seen through a watch,
// image pull excluded (pre-pulled). N = 1, 10 and 110 pods created at once,
// with nodeName preset and through the scheduler, on our apiserver and
// kubelet with real containerd. The baseline is the raw CRI floor
// (RunPodSandbox + CreateContainer + StartContainer for N pods from a minimal
// script) measured in the same run on the same containerd.
// Run as root: npm run bench:api-pod-startup   (BENCH_SIZES=1,10,110)
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO } from '../e2e/harness.js';
import type { Round } from './api-pod-startup-runner.js';
import { criFloor, runBench } from './bench-node.js';
import { percentile } from './stats.js';

const SIZES = (process.env.BENCH_SIZES ?? '1,10,110').split(',').map(Number);

const ms = (x: number): string => `${x.toFixed(0)} ms`;

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  const cluster = new TestCluster();
  const floors = new Map<number, number[]>();
  try {
    await cluster.start(async (node) => {
      const imageRef = await node.cri.pullImage(APP_IMAGE, null);
      for (const n of SIZES) floors.set(n, await criFloor(node, n, imageRef));
    });
    const node = cluster.node;
    const out = execFileSync(
      'nsenter',
      [
        `--net=/run/netns/${node.netns}`,
        process.execPath,
        '--import',
        'tsx',
        path.join(REPO, 'bench/api-pod-startup-runner.ts'),
        cluster.as.kubeconfig,
        node.name,
        APP_IMAGE,
        SIZES.join(','),
        String(node.kubelet!.pid),
      ],
      {
        cwd: REPO,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        timeout: 30 * 60_000,
      },
    );
    const r = JSON.parse(out.trim().split('\n').pop()!) as { idleRssMiB: number; rounds: Round[] };
    process.stdout.write(
      `API pod startup (creationTimestamp -> all containers running, seen through a watch; image pre-pulled), containerd ${(await node.cri.version()).runtime_version}\n`,
    );
    process.stdout.write(`kubelet RSS idle: ${r.idleRssMiB.toFixed(1)} MiB\n\n`);
    process.stdout.write(
      'mode      |    N |  SLI p50 |  SLI p99 | req p50 | req p99 | floor p50 | floor p99 | ratio p50 | ratio p99 | kubelet CPU | steady CPU | kubelet RSS\n',
    );
    for (const x of r.rounds) {
      const floor = floors.get(x.n)!;
      const [sp50, sp99, rp50, rp99, fp50, fp99] = [
        percentile(x.sli, 50),
        percentile(x.sli, 99),
        percentile(x.fromRequest, 50),
        percentile(x.fromRequest, 99),
        percentile(floor, 50),
        percentile(floor, 99),
      ];
      process.stdout.write(
        `${x.mode.padEnd(9)} | ${String(x.n).padStart(4)} | ${ms(sp50).padStart(8)} | ${ms(sp99).padStart(8)} | ${ms(rp50).padStart(7)} | ${ms(rp99).padStart(7)} | ${ms(fp50).padStart(9)} | ${ms(fp99).padStart(9)} | ${(rp50 / fp50).toFixed(2).padStart(9)} | ${(rp99 / fp99).toFixed(2).padStart(9)} | ${`${x.kubeletCpuSeconds.toFixed(2)} s`.padStart(11)} | ${`${x.steadyCpuPct.toFixed(1)} %`.padStart(10)} | ${x.kubeletRssMiB.toFixed(1)} MiB\n`,
      );
    }
    process.stdout.write(
      [
        '',
        'SLI = from creationTimestamp, which has whole-second resolution (so it reads up to 1 s high); req = from the create request, in ms.',
        'floor = RunPodSandbox+CreateContainer+StartContainer for N pods at once from a script; ratio = req / floor.',
        'kubelet CPU = CPU seconds the kubelet used until all N were running; steady CPU = its share of one core over the next 10 s with N pods.',
        '',
      ].join('\n'),
    );
  } finally {
    await cluster.cleanup();
  }
});
