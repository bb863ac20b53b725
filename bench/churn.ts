// Benchmark: a soak. Our apiserver and kubelet on real containerd
// in a throwaway node namespace; waves of 100 pods (readiness and liveness
// probes, an emptyDir, a configMap and a downward API volume) are created,
// run until Ready, and deleted, for BENCH_MINUTES (default 60; BENCH_PODS to
// change the wave). Printed at the start and the end: sandboxes, containers,
// mounts and pod directories under the kubelet's root, pod log directories,
// iptables rules, and the kubelet's RSS and open file descriptors. Leaks must
// be 0 and memory flat. Run as root: npm run bench:churn
import fs from 'node:fs';
import path from 'node:path';

import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import { rssKiB, runBench } from './stats.js';

const MINUTES = Number(process.env.BENCH_MINUTES ?? 60);
const PODS = Number(process.env.BENCH_PODS ?? 100);

interface Snapshot {
  sandboxes: number;
  containers: number;
  mounts: number;
  podDirs: number;
  logDirs: number;
  iptablesRules: number;
  rssMiB: number;
  /** V8 heap in use (the kubelet's nodejs_heap_size_used_bytes): what RSS growth is made of, or not. */
  heapMiB: number;
  fds: number;
}

const METRICS = '127.0.0.1:10299';

const count = (dir: string): number => (fs.existsSync(dir) ? fs.readdirSync(dir).length : 0);

async function snapshot(cluster: TestCluster): Promise<Snapshot> {
  const node = cluster.node;
  const pid = node.kubelet!.pid;
  const root = node.kubeletRoot;
  return {
    sandboxes: (await node.cri.listPodSandbox()).length,
    containers: (await node.cri.listContainers()).length,
    mounts: fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.split(' ')[4]?.startsWith(`${root}/`)).length,
    podDirs: count(path.join(root, 'pods')),
    logDirs: count(node.podLogsDir),
    iptablesRules: node
      .exec('iptables-save', [])
      .split('\n')
      .filter((l) => l.startsWith('-A')).length,
    rssMiB: rssKiB(pid) / 1024,
    heapMiB:
      Number(/^nodejs_heap_size_used_bytes (\d+)/m.exec(node.httpGet(`http://${METRICS}/metrics`))?.[1] ?? NaN) /
      2 ** 20,
    fds: fs.readdirSync(`/proc/${pid}/fd`).length,
  };
}

function podYaml(wave: number, i: number): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `churn-${wave}-${i}`, labels: { churn: String(wave) } },
    spec: {
      terminationGracePeriodSeconds: 1,
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'churn' } },
        { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      ],
      containers: [
        {
          name: 'c',
          image: APP_IMAGE,
          command: ['sh', '-c', 'echo up > /scratch/state; exec sleep 36000'],
          volumeMounts: [
            { name: 'scratch', mountPath: '/scratch' },
            { name: 'cfg', mountPath: '/cfg' },
            { name: 'info', mountPath: '/info' },
          ],
          readinessProbe: { exec: { command: ['test', '-e', '/scratch/state'] }, periodSeconds: 2 },
          livenessProbe: { exec: { command: ['true'] }, periodSeconds: 5 },
        },
      ],
    },
  };
}

async function main(): Promise<void> {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  const cluster = new TestCluster({ kubeletFlags: [`--metrics-bind-address=${METRICS}`] });
  await cluster.start();
  try {
    cluster.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'churn' }, data: { key: 'value' } });
    await waitFor(
      () =>
        /True/.test(
          cluster.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']),
        ),
      60_000,
      500,
      'node Ready',
    );
    const start = await snapshot(cluster);
    const t0 = Date.now();
    let wave = 0;
    const waveMs: number[] = [];
    /** How long kubectl takes to delete a wave: a slower apiserver over time shows here. */
    const deleteMs: number[] = [];
    let warm: Snapshot | undefined;
    const samples: Snapshot[] = [];
    while (Date.now() - t0 < MINUTES * 60_000) {
      const w0 = Date.now();
      // kubectl writes the 100 pods (and deletes them) one request at a time: on a loaded machine that can take minutes.
      cluster.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: Array.from({ length: PODS }, (_, i) => podYaml(wave, i)),
        }),
        300_000,
      );
      await waitFor(
        () => {
          const r = cluster
            .kubectl(
              [
                'get',
                'pods',
                '-l',
                `churn=${wave}`,
                '-o',
                'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {end}',
              ],
              undefined,
              120_000,
            )
            .trim()
            .split(/\s+/)
            .filter(Boolean);
          return r.length === PODS && r.every((x) => x === 'True');
        },
        600_000,
        1000,
        `wave ${wave} Ready`,
      );
      const d0 = Date.now();
      cluster.kubectl(['delete', 'pods', '-l', `churn=${wave}`, '--wait=false'], undefined, 300_000);
      deleteMs.push(Date.now() - d0);
      await waitFor(
        () => cluster.kubectl(['get', 'pods', '-l', `churn=${wave}`, '-o', 'name'], undefined, 120_000).trim() === '',
        600_000,
        1000,
        `wave ${wave} gone`,
      );
      waveMs.push(Date.now() - w0);
      wave++;
      const now = await snapshot(cluster);
      // After the first wave every cache, pool and code path is warm: growth from there on is what "flat" is about.
      if (wave === 1) warm = now;
      samples.push(now);
      process.stdout.write(
        `wave ${wave}: ${PODS} pods up and gone in ${((Date.now() - w0) / 1000).toFixed(1)} s (kubectl delete ${(deleteMs[deleteMs.length - 1]! / 1000).toFixed(1)} s); kubelet rss ${now.rssMiB.toFixed(1)} MiB heap ${now.heapMiB.toFixed(1)} MiB fds ${now.fds}\n`,
      );
    }
    // The kubelet removes what is left of terminated pods within a GC period (1 min).
    await new Promise((r) => setTimeout(r, 70_000));
    const end = await snapshot(cluster);
    process.stdout.write(
      `\n== churn: ${wave} waves of ${PODS} pods in ${MINUTES} min (probes, emptyDir, configMap, downward API) ==\n`,
    );
    process.stdout.write('| | start | end | leaked |\n|---|---|---|---|\n');
    for (const k of Object.keys(start) as (keyof Snapshot)[]) {
      const d = end[k] - start[k];
      process.stdout.write(
        `| ${k} | ${start[k].toFixed(k.endsWith('MiB') ? 1 : 0)} | ${end[k].toFixed(k.endsWith('MiB') ? 1 : 0)} | ${k.endsWith('MiB') ? `${d >= 0 ? '+' : ''}${d.toFixed(1)} MiB` : d} |\n`,
      );
    }
    if (warm) {
      // Flatness: the last third of the waves against the second, both after warm-up, so one slow GC does not decide it.
      const mean = (xs: Snapshot[], k: 'rssMiB' | 'heapMiB'): number =>
        xs.reduce((a, x) => a + x[k], 0) / Math.max(1, xs.length);
      const t = Math.max(1, Math.floor(samples.length / 3));
      const mid = samples.slice(t, 2 * t);
      const last = samples.slice(-t);
      process.stdout.write(
        `after warm-up (wave 1): rss ${warm.rssMiB.toFixed(1)} MiB heap ${warm.heapMiB.toFixed(1)} MiB; end rss ${end.rssMiB.toFixed(1)} (${end.rssMiB - warm.rssMiB >= 0 ? '+' : ''}${(end.rssMiB - warm.rssMiB).toFixed(1)}) heap ${end.heapMiB.toFixed(1)} (${end.heapMiB - warm.heapMiB >= 0 ? '+' : ''}${(end.heapMiB - warm.heapMiB).toFixed(1)})\n`,
      );
      if (mid.length)
        process.stdout.write(
          `mean over waves: middle third rss ${mean(mid, 'rssMiB').toFixed(1)} heap ${mean(mid, 'heapMiB').toFixed(1)} MiB; last third rss ${mean(last, 'rssMiB').toFixed(1)} heap ${mean(last, 'heapMiB').toFixed(1)} MiB (rss ratio ${(mean(last, 'rssMiB') / mean(mid, 'rssMiB')).toFixed(3)})\n`,
        );
    }
    const sorted = [...waveMs].sort((a, b) => a - b);
    process.stdout.write(`wave time p50 ${((sorted[Math.floor(sorted.length / 2)] ?? 0) / 1000).toFixed(1)} s\n`);
    const third = Math.max(1, Math.floor(deleteMs.length / 3));
    const avg = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length) / 1000;
    process.stdout.write(
      `kubectl delete of a wave: first third ${avg(deleteMs.slice(0, third)).toFixed(1)} s, last third ${avg(deleteMs.slice(-third)).toFixed(1)} s (ratio ${(avg(deleteMs.slice(-third)) / avg(deleteMs.slice(0, third))).toFixed(2)})\n`,
    );
    process.stdout.write('goal: every leak 0 and memory flat over an hour\n');
  } finally {
    await cluster.cleanup();
  }
}

runBench(main);
