// Benchmark: static pod startup latency, from manifest write to the
// container running (CRI started_at), for N = 1, 10 and 50 pods, against the
// raw CRI floor (RunPodSandbox + CreateContainer + StartContainer from a
// minimal script) measured in the same run on the same containerd.
// Run as root: npm run bench:static-pod-startup
import fs from 'node:fs';
import path from 'node:path';

import { L_POD_NAME } from '../agent/pods/labels.js';
import { APP_IMAGE, TestNode, writeManifestAtomic } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import { criFloor, IDLE_CMD, podManifest, runBench, withBenchNode } from './bench-node.js';
import { percentile, rssKiB } from './stats.js';

const SIZES = (process.env.BENCH_SIZES ?? '1,10,50').split(',').map(Number);

const manifest = (name: string): string =>
  podManifest(
    name,
    `  - name: main
    image: ${APP_IMAGE}
    command: ["/bin/sh", "-c", ${JSON.stringify(IDLE_CMD)}]
`,
  );

async function kubeletRun(node: TestNode, n: number): Promise<{ lat: number[]; rss: number }> {
  const written = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const name = `bench-${n}-${i}`;
    written.set(`${name}-${node.name}`, Date.now());
    writeManifestAtomic(node.manifests, `${name}.yaml`, manifest(name));
  }
  const started = await waitFor(
    async () => {
      const cs = (await node.cri.listContainers()).filter(
        (c) => c.state === 'CONTAINER_RUNNING' && written.has(c.labels[L_POD_NAME] ?? ''),
      );
      return cs.length >= n ? cs : undefined;
    },
    300_000,
    100,
    `${n} pods running`,
  );
  const lat: number[] = [];
  for (const c of started) {
    const st = await node.cri.containerStatus(c.id);
    lat.push(Number(st.started_at) / 1e6 - written.get(c.labels[L_POD_NAME]!)!);
  }
  const rss = rssKiB(node.kubelet!.pid);
  for (const f of fs.readdirSync(node.manifests)) fs.rmSync(path.join(node.manifests, f));
  await waitFor(async () => (await node.cri.listPodSandbox()).length === 0, 300_000, 200, 'pods removed');
  return { lat, rss };
}

const fmt = (ms: number): string => `${ms.toFixed(0)} ms`;

runBench(() =>
  withBenchNode(async (node, imageRef) => {
    // Floors first: a running kubelet would rightly kill the script's pods as orphans.
    const floors = new Map<number, number[]>();
    for (const n of SIZES) floors.set(n, await criFloor(node, n, imageRef));
    node.startKubelet();
    await waitFor(() => node.kubeletLog().includes('kubelet started'), 30_000, 100, 'kubelet');
    const idleRss = rssKiB(node.kubelet!.pid);
    process.stdout.write(
      `static pod startup (manifest write -> container running), containerd ${(await node.cri.version()).runtime_version}\n`,
    );
    process.stdout.write(`kubelet RSS idle: ${(idleRss / 1024).toFixed(1)} MiB\n\n`);
    process.stdout.write(
      '   N | kubelet p50 | kubelet p99 |  floor p50 |  floor p99 | ratio p50 | ratio p99 | kubelet RSS\n',
    );
    for (const n of SIZES) {
      const floor = floors.get(n)!;
      const k = await kubeletRun(node, n);
      const [kp50, kp99, fp50, fp99] = [
        percentile(k.lat, 50),
        percentile(k.lat, 99),
        percentile(floor, 50),
        percentile(floor, 99),
      ];
      process.stdout.write(
        `${String(n).padStart(4)} | ${fmt(kp50).padStart(11)} | ${fmt(kp99).padStart(11)} | ${fmt(fp50).padStart(10)} | ${fmt(fp99).padStart(10)} | ${(kp50 / fp50).toFixed(2).padStart(9)} | ${(kp99 / fp99).toFixed(2).padStart(9)} | ${(k.rss / 1024).toFixed(1)} MiB\n`,
      );
    }
    process.stdout.write(
      '\nfloor = RunPodSandbox+CreateContainer+StartContainer for N pods at once from a minimal script; ratio = kubelet/floor.\n',
    );
  }),
);
