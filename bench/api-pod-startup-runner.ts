// bench/api-pod-startup, the part that runs inside the node's network
// namespace (where the apiserver listens): for each mode (nodeName preset, or
// bound by the scheduler) and each N, creates N pods at once and watches them
// until every container is reported running. Also samples the kubelet's CPU
// and RSS (same PID namespace). Prints one JSON line. Started by
// bench/api-pod-startup.ts.
import { waitFor } from '../e2e/proc.js';
import { type KObj, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { IDLE_CMD } from './bench-node.js';
import { childCpuSeconds, cpuSeconds, rssKiB } from './stats.js';

const [kubeconfig, nodeName, image, sizesArg, kubeletPidArg, sinceArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
/** The kubelet started then: its Node heartbeat must be newer (a restarted kubelet's Node reads Ready from before). */
const SINCE = Math.floor(Number(sinceArg ?? 0) / 1000) * 1000;
const SIZES = sizesArg.split(',').map(Number);
const KUBELET = Number(kubeletPidArg);
const PODS = '/api/v1/namespaces/default/pods';
const STEADY_SECONDS = 10;
/** The kubelet's CPU seconds, what it ran (mount, …) included. */
const kubeletCpu = (): number => cpuSeconds(KUBELET) + childCpuSeconds(KUBELET);

const client = new KubeClient(loadKubeconfig(kubeconfig));

export interface Round {
  mode: 'nodeName' | 'scheduler';
  n: number;
  /** The upstream SLI: creationTimestamp (whole seconds) to all containers running, seen through a watch. */
  sli: number[];
  /** The same end, from the moment the create request was sent (ms resolution). */
  fromRequest: number[];
  kubeletCpuSeconds: number;
  kubeletRssMiB: number;
  /** Kubelet CPU share of one core while the N pods just keep running. */
  steadyCpuPct: number;
}

const allRunning = (p: KObj): boolean =>
  p.status?.phase === 'Running' &&
  (p.status.containerStatuses ?? []).length === p.spec.containers.length &&
  p.status.containerStatuses.every((c: KObj) => c.state?.running);

async function round(mode: Round['mode'], n: number): Promise<Round> {
  const label = `bench-${mode}-${n}`.toLowerCase();
  const list = await client.get(PODS, { labelSelector: `round=${label}` });
  const seen = new Map<string, number>();
  const ac = new AbortController();
  const watching = (async () => {
    for await (const ev of client.watch(
      PODS,
      { labelSelector: `round=${label}`, resourceVersion: list.metadata.resourceVersion },
      ac.signal,
    )) {
      if (
        (ev.type === 'ADDED' || ev.type === 'MODIFIED') &&
        allRunning(ev.object) &&
        !seen.has(ev.object.metadata.name)
      ) {
        seen.set(ev.object.metadata.name, Date.now());
      }
    }
  })().catch(() => undefined);
  const cpu0 = kubeletCpu();
  const sent = new Map<string, number>();
  const created = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const name = `${label}-${i}`;
      sent.set(name, Date.now());
      return client.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { round: label } },
        spec: {
          ...(mode === 'nodeName' ? { nodeName } : {}),
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image, imagePullPolicy: 'IfNotPresent', command: ['/bin/sh', '-c', IDLE_CMD] }],
        },
      });
    }),
  );
  await waitFor(() => seen.size >= n, 300_000, 50, `${n} pods running (${mode})`);
  const kubeletCpuSeconds = kubeletCpu() - cpu0;
  const kubeletRssMiB = rssKiB(KUBELET) / 1024;
  const steady0 = kubeletCpu();
  await new Promise((r) => setTimeout(r, STEADY_SECONDS * 1000));
  const steadyCpuPct = ((kubeletCpu() - steady0) / STEADY_SECONDS) * 100;
  ac.abort();
  await watching;
  const sli = created.map((p) => seen.get(p.metadata.name)! - Date.parse(p.metadata.creationTimestamp));
  const fromRequest = created.map((p) => seen.get(p.metadata.name)! - sent.get(p.metadata.name)!);
  await Promise.all(created.map((p) => client.delete(`${PODS}/${p.metadata.name}`)));
  await waitFor(
    async () => ((await client.get(PODS, { labelSelector: `round=${label}` })).items as KObj[]).length === 0,
    300_000,
    200,
    `${n} pods deleted`,
  );
  return { mode, n, sli, fromRequest, kubeletCpuSeconds, kubeletRssMiB, steadyCpuPct };
}

async function main(): Promise<void> {
  await waitFor(
    async () =>
      ((await client.get(`/api/v1/nodes/${nodeName}`)).status?.conditions ?? []).some(
        (c: KObj) => c.type === 'Ready' && c.status === 'True' && Date.parse(c.lastHeartbeatTime) >= SINCE,
      ),
    60_000,
    200,
    'node Ready',
  ).catch((e: Error) => {
    throw new Error(`${e.message}: the kubelet did not register`);
  });
  const idleRssMiB = rssKiB(KUBELET) / 1024;
  const rounds: Round[] = [];
  for (const mode of ['nodeName', 'scheduler'] as const) for (const n of SIZES) rounds.push(await round(mode, n));
  process.stdout.write(`${JSON.stringify({ idleRssMiB, rounds })}\n`);
  client.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
});
