// Benchmark: static pod startup, from manifest write to the container running
// (CRI started_at), for N = 1, 10 and 110 pods, on tskube's kubelet and on the
// upstream kubelet (v1.37.2, the fixture), taking turns on the same containerd,
// manifest dir and pods; and the raw CRI floor (RunPodSandbox + CreateContainer
// + StartContainer from a minimal script) in the same run.
// tskube runs compiled, as users run it (npm run build first).
// Run as root: npm run bench:static-pod-startup   (BENCH_SIZES=1,10,110)
import fs from 'node:fs';
import path from 'node:path';

import { L_POD_NAME } from '../agent/pods/labels.js';
import { APP_IMAGE, type TestNode, writeManifestAtomic } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import {
  clearRuntime,
  criFloor,
  IDLE_CMD,
  podManifest,
  runBench,
  useCompiledCli,
  withBenchNode,
} from './bench-node.js';
import { type KubeletRunner, type KubeletTurn, ratioLine, ratios, TURN_HEADER, turnRow } from './kubelet-turns.js';
import { childCpuSeconds, cpuSeconds, percentile, rssKiB } from './stats.js';
import { upstreamKubelet, upstreamRunner } from './upstream-kubelet.js';

const SIZES = (process.env.BENCH_SIZES ?? '1,10,110').split(',').map(Number);
const STEADY_MS = 10_000;

const manifest = (name: string): string =>
  podManifest(
    name,
    `  - name: main
    image: ${APP_IMAGE}
    command: ["/bin/sh", "-c", ${JSON.stringify(IDLE_CMD)}]
`,
  );

const cpu = (pid: number): number => cpuSeconds(pid) + childCpuSeconds(pid);

async function turn(node: TestNode, k: KubeletRunner, n: number): Promise<KubeletTurn> {
  const pid = await k.start();
  try {
    // Settled: the start's own work (its first syncs, caches) is not the pods'.
    await new Promise((r) => setTimeout(r, 3000));
    const rssIdleKiB = rssKiB(pid);
    const cpu0 = cpu(pid);
    const written = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const name = `bench-${n}-${i}`;
      written.set(`${name}-${node.name}`, Date.now());
      writeManifestAtomic(node.manifests, `${name}.yaml`, manifest(name));
    }
    const running = await waitFor(
      async () => {
        const cs = (await node.cri.listContainers()).filter(
          (c) => c.state === 'CONTAINER_RUNNING' && written.has(c.labels[L_POD_NAME] ?? ''),
        );
        return cs.length >= n ? cs : undefined;
      },
      600_000,
      100,
      `${n} pods running under the ${k.name} kubelet`,
    );
    const cpuSec = cpu(pid) - cpu0;
    const lat: number[] = [];
    for (const c of running) {
      const st = await node.cri.containerStatus(c.id);
      lat.push(Number(st.started_at) / 1e6 - written.get(c.labels[L_POD_NAME]!)!);
    }
    const c1 = cpu(pid);
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const steadyPct = ((cpu(pid) - c1) / (STEADY_MS / 1000)) * 100;
    const rss = rssKiB(pid);
    for (const f of fs.readdirSync(node.manifests)) fs.rmSync(path.join(node.manifests, f));
    await waitFor(
      async () => !(await node.cri.listContainers()).some((c) => c.state === 'CONTAINER_RUNNING'),
      300_000,
      200,
      `the ${k.name} kubelet stopping ${n} pods`,
    );
    return { kubelet: k.name, n, lat, cpuSec, steadyPct, rssIdleKiB, rssKiB: rss };
  } finally {
    await k.stop();
    await clearRuntime(node);
  }
}

runBench(() => {
  useCompiledCli();
  return withBenchNode(async (node, imageRef) => {
    // Floors first: a running kubelet would rightly kill the script's pods as orphans.
    const floors = new Map<number, number[]>();
    for (const n of SIZES) floors.set(n, await criFloor(node, n, imageRef));
    const tskube: KubeletRunner = {
      name: 'tskube',
      start: async () => {
        const p = node.startKubelet();
        await waitFor(() => node.kubeletLog().includes('kubelet started'), 30_000, 100, 'kubelet');
        return p.pid;
      },
      stop: () => node.stopKubelet(),
    };
    const fixture = upstreamKubelet();
    const runners: KubeletRunner[] = [tskube];
    if ('binary' in fixture) runners.push(upstreamRunner(node, fixture.binary));
    const turns: KubeletTurn[] = [];
    // Turns alternate, and which kubelet goes first alternates with N.
    for (const [i, n] of SIZES.entries())
      for (const k of i % 2 ? [...runners].reverse() : runners) turns.push(await turn(node, k, n));

    const out = (s = ''): boolean => process.stdout.write(`${s}\n`);
    out(
      `static pod startup (manifest write -> container running), containerd ${(await node.cri.version()).runtime_version}`,
    );
    if ('skipped' in fixture) out(`upstream columns skipped: ${fixture.skipped}`);
    out();
    out(`${TURN_HEADER} | floor p50 | floor p99`);
    for (const n of SIZES) {
      const floor = floors.get(n)!;
      for (const t of turns.filter((x) => x.n === n))
        out(
          `${turnRow(t)} | ${`${percentile(floor, 50).toFixed(0)} ms`.padStart(9)} | ${`${percentile(floor, 99).toFixed(0)} ms`.padStart(9)}`,
        );
    }
    const pairs = SIZES.map((n) => [
      turns.find((t) => t.n === n && t.kubelet === 'tskube')!,
      turns.find((t) => t.n === n && t.kubelet === 'upstream'),
    ]);
    if (pairs.some(([, u]) => u)) {
      out('\ntskube / upstream (goals from issue 49):');
      for (const [t, u] of pairs) if (u) out(`  ${ratioLine(ratios(t!, u))}`);
    }
    out(
      "\nCPU to N = the kubelet's CPU seconds (children included) from the first write until all N run; steady CPU = its share of one core over the next 10 s.",
    );
    out('floor = RunPodSandbox+CreateContainer+StartContainer for N pods at once from a minimal script.');
  });
});
