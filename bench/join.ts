// Benchmark: joining a node. (1) Two "VMs" on a LAN bridge: VM 1
// runs `tskube up` (its time to Ready is printed as the reference), VM 2 runs
// the printed `tskube join`: time to the Node Ready and to the first pod Running
// there (a pod bound to VM 2 before it joined; its image comes through the
// mirrored registry). (2) Route convergence: with 10, 100 and 1,000 simulated
// Nodes in a dev apiserver, the time from one more Node's create to its route
// in the kernel, against one `ip route replace` (the floor). Everything runs
// in throwaway network namespaces. Run as root: npm run bench:join
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { e2eSkipReason, REPO } from '../e2e/harness.js';
import { sh, waitFor } from '../e2e/proc.js';
import { Lan } from '../e2e/vms.js';
import { runBench } from './bench-node.js';

const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const msf = (ms: number): string => `${ms.toFixed(1)} ms`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function joinTimes(): Promise<void> {
  const lan = new Lan();
  await lan.create();
  try {
    const vm1 = await lan.vm('vm-1', '192.0.2.1');
    const vm2 = await lan.vm('vm-2', '192.0.2.2');
    const kubectl = (args: string[], input?: string): string =>
      vm1.exec('kubectl', [`--kubeconfig=${vm1.dir}/pki/admin.kubeconfig`, ...args], { input });
    let t = Date.now();
    const out = await vm1.run(['up'], /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/);
    const upMs = Date.now() - t;
    const join = /tskube join .*$/m.exec(out)![0].trim().split(/\s+/).slice(1);
    // Bound to vm-2 before it exists: the kubelet runs it as soon as it has joined.
    kubectl(['run', 'first', '--image=127.0.0.1:5000/tskube/app:1', '--overrides={"spec":{"nodeName":"vm-2"}}']);
    t = Date.now();
    const running = waitFor(
      () => (kubectl(['get', 'pod', 'first', '-o', 'jsonpath={.status.phase}']) === 'Running' ? Date.now() : 0),
      180_000,
      100,
      'first pod Running on vm-2',
    );
    await vm2.run(join, /This node has joined the cluster/);
    const readyMs = Date.now() - t;
    const podMs = (await running) - t;
    process.stdout.write(`\n== tskube join (two VMs on one LAN bridge) ==\n`);
    process.stdout.write(`tskube up on vm-1 to Ready (reference, includes building the images): ${s(upMs)}\n`);
    process.stdout.write(
      `tskube join on vm-2 to Node Ready (discovery, containerd start, TLS bootstrap, registration): ${s(readyMs)}\n`,
    );
    process.stdout.write(
      `tskube join on vm-2 to its first pod Running (image pulled through the mirror): ${s(podMs)}\n`,
    );
    process.stdout.write(
      `goal: none stated; upstream kubeadm join takes tens of seconds (preflight, kubelet restart)\n`,
    );
  } finally {
    await lan.cleanup();
  }
}

function routeConvergence(): void {
  const netns = `tskube-bench-${randomBytes(3).toString('hex')}`;
  sh('ip', ['netns', 'add', netns]);
  let r: { floorMs: number; results: { nodes: number; initialMs: number; addMs: number[] }[] };
  try {
    sh('ip', ['link', 'set', 'lo', 'up'], { netns });
    const out = execFileSync(
      'nsenter',
      [
        `--net=/run/netns/${netns}`,
        process.execPath,
        '--import',
        'tsx',
        path.join(REPO, 'bench/route-convergence-runner.ts'),
      ],
      { cwd: REPO, encoding: 'utf8', maxBuffer: 16 << 20, timeout: 1_800_000, env: process.env },
    );
    r = JSON.parse(out.trim().split('\n').pop()!) as typeof r;
  } finally {
    sh('ip', ['netns', 'del', netns], { allowFail: true });
  }
  process.stdout.write(`\n== host-gw route convergence (simulated Nodes, dev apiserver, real kernel routes) ==\n`);
  process.stdout.write(`floor: one \`ip route replace\` = ${msf(r.floorMs)} (median of 20)\n`);
  process.stdout.write('  nodes | first sync (all routes) | Node created -> route in kernel (median of 5) | x floor\n');
  for (const x of r.results) {
    const m = median(x.addMs);
    process.stdout.write(
      `${String(x.nodes).padStart(7)} | ${msf(x.initialMs).padStart(23)} | ${msf(m).padStart(46)} | ${(m / r.floorMs).toFixed(1).padStart(7)}\n`,
    );
  }
  process.stdout.write('goal: convergence after a Node is added, measured against the floor; no number stated\n');
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  if (process.env.BENCH_SKIP_JOIN !== '1') await joinTimes();
  routeConvergence();
});
