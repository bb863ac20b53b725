// Benchmark: API pod startup latency, the upstream SLI: from a pod's
// creationTimestamp to all its containers running, as seen through a watch,
// image pull excluded (pre-pulled). N = 1, 10 and 110 pods created at once,
// with nodeName preset and through the scheduler, on tskube's kubelet and on
// the upstream kubelet (v1.37.2, the fixture) taking turns on the same
// apiserver, containerd and node credentials; and the raw CRI floor
// (RunPodSandbox + CreateContainer + StartContainer for N pods from a minimal
// script) in the same run.
// tskube runs compiled, as users run it (npm run build first).
// Run as root: npm run bench:api-pod-startup   (BENCH_SIZES=1,10,110)
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import type { Round } from './api-pod-startup-runner.js';
import { clearRuntime, criFloor, runBench, useCompiledCli } from './bench-node.js';
import {
  type KubeletName,
  type KubeletRunner,
  type KubeletTurn,
  ratioLine,
  ratios,
  TURN_HEADER,
  turnRow,
} from './kubelet-turns.js';
import { percentile } from './stats.js';
import { upstreamKubelet, upstreamRunner } from './upstream-kubelet.js';

const SIZES = (process.env.BENCH_SIZES ?? '1,10,110').split(',').map(Number);

interface ApiTurn extends KubeletTurn {
  mode: Round['mode'];
  sli: number[];
}

/** One kubelet, one N: the runner in the node's namespace does both modes and prints them as JSON. */
async function turn(cluster: TestCluster, k: KubeletRunner, n: number): Promise<ApiTurn[]> {
  const since = Date.now();
  const pid = await k.start();
  try {
    const out = execFileSync(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        process.execPath,
        '--import',
        'tsx',
        path.join(REPO, 'bench/api-pod-startup-runner.ts'),
        cluster.as.kubeconfig,
        cluster.node.name,
        APP_IMAGE,
        String(n),
        String(pid),
        String(since),
      ],
      { cwd: REPO, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 },
    );
    const r = JSON.parse(out.trim().split('\n').pop()!) as { idleRssMiB: number; rounds: Round[] };
    return r.rounds.map((x) => ({
      kubelet: k.name,
      mode: x.mode,
      n: x.n,
      lat: x.fromRequest,
      sli: x.sli,
      cpuSec: x.kubeletCpuSeconds,
      steadyPct: x.steadyCpuPct,
      rssIdleKiB: r.idleRssMiB * 1024,
      rssKiB: x.kubeletRssMiB * 1024,
    }));
  } finally {
    await k.stop();
    await clearRuntime(cluster.node);
  }
}

runBench(async () => {
  useCompiledCli();
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  const cluster = new TestCluster({ kubelet: false });
  const floors = new Map<number, number[]>();
  try {
    await cluster.start(async (node) => {
      const imageRef = await node.cri.pullImage(APP_IMAGE, null);
      for (const n of SIZES) floors.set(n, await criFloor(node, n, imageRef));
    });
    const node = cluster.node;
    const runners: KubeletRunner[] = [
      {
        name: 'tskube',
        start: async () => {
          cluster.startKubelet();
          await waitFor(() => node.kubeletLog().includes('kubelet started'), 30_000, 100, 'kubelet');
          return node.kubelet!.pid;
        },
        stop: () => node.stopKubelet(),
      },
    ];
    const fixture = upstreamKubelet();
    if ('binary' in fixture)
      runners.push(
        upstreamRunner(node, fixture.binary, {
          kubeconfig: path.join(cluster.as.dir, 'pki', `node-${node.name}.kubeconfig`),
        }),
      );
    const turns: ApiTurn[] = [];
    for (const [i, n] of SIZES.entries())
      for (const k of i % 2 ? [...runners].reverse() : runners) turns.push(...(await turn(cluster, k, n)));

    const out = (s = ''): boolean => process.stdout.write(`${s}\n`);
    const ms = (x: number): string => `${x.toFixed(0)} ms`.padStart(9);
    out(
      `API pod startup (create request -> all containers running, seen through a watch; image pre-pulled), containerd ${(await node.cri.version()).runtime_version}`,
    );
    if ('skipped' in fixture) out(`upstream columns skipped: ${fixture.skipped}`);
    for (const mode of ['nodeName', 'scheduler'] as const) {
      out(`\n${mode === 'nodeName' ? 'nodeName preset' : 'bound by the scheduler'}:`);
      out(`${TURN_HEADER} |  SLI p99 | floor p50 | floor p99`);
      for (const n of SIZES) {
        const floor = floors.get(n)!;
        for (const t of turns.filter((x) => x.n === n && x.mode === mode))
          out(
            `${turnRow(t)} |${ms(percentile(t.sli, 99))} | ${ms(percentile(floor, 50))} | ${ms(percentile(floor, 99))}`,
          );
      }
      const pairs = SIZES.map((n) => {
        const of = (k: KubeletName): ApiTurn | undefined =>
          turns.find((t) => t.n === n && t.mode === mode && t.kubelet === k);
        return [of('tskube')!, of('upstream')] as const;
      });
      if (pairs.some(([, u]) => u)) {
        out('tskube / upstream (goals from issue 49):');
        for (const [t, u] of pairs) if (u) out(`  ${ratioLine(ratios(t, u))}`);
      }
    }
    out(
      [
        '',
        'p50/p99 = from the create request, in ms; SLI = from creationTimestamp, which has whole-second resolution (so it reads up to 1 s high).',
        'CPU to N = CPU seconds the kubelet used (children included) until all N were running; steady CPU = its share of one core over the next 10 s.',
        'floor = RunPodSandbox+CreateContainer+StartContainer for N pods at once from a script.',
      ].join('\n'),
    );
  } finally {
    await cluster.cleanup();
  }
});
