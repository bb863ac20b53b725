// Benchmark: Jobs completing on a real node. Our apiserver (with
// its controllers) and kubelet on real containerd in a throwaway node
// namespace; BENCH_JOBS (1,000) Jobs of one short pod each are created with
// kubectl and run to Complete. The baseline, in the same run on the same node,
// is as many bare pods (restartPolicy Never) run to Succeeded: the ratio is
// what the Job machinery costs. Printed: wall time, Jobs a second, and the
// apiserver's and kubelet's CPU seconds for each. Run as root: npm run bench:jobs
import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import { cpuSeconds, runBench } from './stats.js';

const N = Number(process.env.BENCH_JOBS ?? 1000);
const spec = {
  restartPolicy: 'Never',
  terminationGracePeriodSeconds: 1,
  containers: [{ name: 'c', image: APP_IMAGE, command: ['true'] }],
};

interface Run {
  seconds: number;
  apiserverCpu: number;
  kubeletCpu: number;
}

async function measure(cluster: TestCluster, what: string, items: object[], done: () => boolean): Promise<Run> {
  const api = cluster.as.proc!.pid;
  const kubelet = cluster.node.kubelet!.pid;
  const [a0, k0, t0] = [cpuSeconds(api), cpuSeconds(kubelet), Date.now()];
  // kubectl writes one object per request; a List of a thousand takes a while on a loaded machine.
  for (let i = 0; i < items.length; i += 250)
    cluster.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + 250) }),
      600_000,
    );
  await waitFor(done, 3_600_000, 2000, `${what} done`);
  return {
    seconds: (Date.now() - t0) / 1000,
    apiserverCpu: cpuSeconds(api) - a0,
    kubeletCpu: cpuSeconds(kubelet) - k0,
  };
}

async function main(): Promise<void> {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  const cluster = new TestCluster();
  await cluster.start();
  try {
    await waitFor(
      () =>
        /True/.test(
          cluster.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']),
        ),
      60_000,
      500,
      'node Ready',
    );
    const count = (args: string[]): number =>
      cluster.kubectl(args, undefined, 120_000).trim().split(/\s+/).filter(Boolean).length;
    const pods = await measure(
      cluster,
      'pods',
      Array.from({ length: N }, (_, i) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `bare-${i}`, labels: { bench: 'bare' } },
        spec,
      })),
      () => count(['get', 'pods', '-l', 'bench=bare', '--field-selector=status.phase=Succeeded', '-o', 'name']) === N,
    );
    cluster.kubectl(['delete', 'pods', '-l', 'bench=bare', '--wait=false'], undefined, 600_000);
    await waitFor(
      () => count(['get', 'pods', '-l', 'bench=bare', '-o', 'name']) === 0,
      600_000,
      2000,
      'bare pods gone',
    );
    const jobs = await measure(
      cluster,
      'jobs',
      Array.from({ length: N }, (_, i) => ({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: `job-${i}`, labels: { bench: 'job' } },
        spec: { template: { spec } },
      })),
      () =>
        cluster
          .kubectl(
            ['get', 'jobs', '-l', 'bench=job', '-o', 'jsonpath={range .items[*]}{.status.succeeded}{"\\n"}{end}'],
            undefined,
            120_000,
          )
          .split('\n')
          .filter((l) => l === '1').length === N,
    );
    process.stdout.write(`\n== ${N} Jobs of one pod each, completing on one node (real containerd) ==\n`);
    process.stdout.write('| | wall s | per second | apiserver CPU s | kubelet CPU s |\n|---|---|---|---|---|\n');
    for (const [name, r] of [
      ['bare pods (baseline)', pods],
      ['Jobs', jobs],
    ] as const)
      process.stdout.write(
        `| ${name} | ${r.seconds.toFixed(1)} | ${(N / r.seconds).toFixed(1)} | ${r.apiserverCpu.toFixed(1)} | ${r.kubeletCpu.toFixed(1)} |\n`,
      );
    process.stdout.write(
      `ratio Jobs / bare pods: wall ${(jobs.seconds / pods.seconds).toFixed(2)}, apiserver CPU ${(jobs.apiserverCpu / pods.apiserverCpu).toFixed(2)}\n`,
    );
    process.stdout.write(
      'goal: 1,000 Jobs completing on the node, time and apiserver CPU (against the same for bare pods)\n',
    );
  } finally {
    await cluster.cleanup();
  }
}

runBench(main);
