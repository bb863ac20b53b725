// Benchmark: what the node-resource managers cost the kubelet —
// the QoS/pod cgroups (cgroupsPerQOS) and the eviction manager (its 10 s
// observation pass over cgroups, filesystems and container stats) — at 0, 30
// and 110 pods. The baseline, in the same run on the same machine, is the
// same kubelet with them off (cgroupsPerQOS: false, evictionHard: {}).
// Run as root: npm run bench:node-resources   (BENCH_SIZES=0,30,110, BENCH_STEADY_SECONDS=30)
import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import { runBench } from './bench-node.js';
import { cpuSeconds, rssKiB } from './stats.js';

const SIZES = (process.env.BENCH_SIZES ?? '0,30,110').split(',').map(Number);
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 30);

interface Row {
  pods: number;
  cpuPct: number;
  rssMiB: number;
}

async function measure(managers: boolean): Promise<Row[]> {
  const config = managers ? 'maxPods: 120\n' : 'maxPods: 120\ncgroupsPerQOS: false\nevictionHard: {}\n';
  const cluster = new TestCluster({ kubeletConfig: config });
  const rows: Row[] = [];
  try {
    await cluster.start(async (node) => void (await node.cri.pullImage(APP_IMAGE, null)));
    const pid = cluster.node.kubelet!.pid;
    await waitFor(() => /\sReady/.test(cluster.kubectl(['get', 'nodes'])), 120_000, 500, 'node Ready');
    cluster.kubectl(['create', 'deployment', 'load', `--image=${APP_IMAGE}`, '--replicas=0', '--', 'sleep', '36000']);
    for (const n of SIZES) {
      cluster.kubectl(['scale', 'deployment', 'load', `--replicas=${n}`]);
      await waitFor(
        () => (cluster.kubectl(['get', 'pods', '--no-headers']).match(/1\/1\s+Running/g) ?? []).length === n,
        15 * 60_000,
        2000,
        `${n} pods running`,
      );
      await new Promise((r) => setTimeout(r, 5000)); // settle
      const c0 = cpuSeconds(pid);
      await new Promise((r) => setTimeout(r, STEADY_SECONDS * 1000));
      rows.push({ pods: n, cpuPct: ((cpuSeconds(pid) - c0) / STEADY_SECONDS) * 100, rssMiB: rssKiB(pid) / 1024 });
    }
  } finally {
    await cluster.cleanup();
  }
  return rows;
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  const off = await measure(false);
  const on = await measure(true);
  process.stdout.write(
    `kubelet steady CPU (% of a core over ${STEADY_SECONDS} s) and RSS, node-resource managers on vs off (baseline, same run)\n\n`,
  );
  process.stdout.write('pods | CPU off | CPU on | CPU on/off | RSS off | RSS on | RSS on/off\n');
  for (const [i, a] of off.entries()) {
    const b = on[i]!;
    process.stdout.write(
      `${String(a.pods).padStart(4)} | ${`${a.cpuPct.toFixed(2)} %`.padStart(7)} | ${`${b.cpuPct.toFixed(2)} %`.padStart(6)} | ${(b.cpuPct / Math.max(a.cpuPct, 0.01)).toFixed(2).padStart(10)} | ${`${a.rssMiB.toFixed(1)} MiB`.padStart(9)} | ${`${b.rssMiB.toFixed(1)} MiB`.padStart(9)} | ${(b.rssMiB / a.rssMiB).toFixed(2)}\n`,
    );
  }
  process.stdout.write("\ngoal: the managers' cost visible beside the baseline; no numeric target is set\n");
});
