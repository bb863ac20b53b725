// Benchmark: memory and start time of the tskube processes, run
// as users run them (the compiled build in dist/) against the same through
// the tsx loader (the baseline, same run, same machine), with the issue's
// goals beside each figure:
// - `tskube agent` alone (static pods, no apiserver): RSS idle, and the time
//   from its start to its first static pod's sandbox and running container
//   (the median of three fresh starts, before anything heavier runs);
// - the kubelet of a node joined to the dev apiserver at 0, 30 and 110 API
//   pods: RSS, its CPU per pod started, and its CPU per second once idle;
// - `tskube proxy` and `tskube apiserver` idle RSS (the apiserver: start to serving);
// - `tskube up` (everything in one process) with 3 pods: RSS, start to "tskube is up";
// - the floor of the CPU per API pod started: bench/pod-floor.ts, a bare script, in the kubelet's place;
// - the upstream kubelet v1.37.2 (the fixture) in the kubelet rows: alone, and joined with the node's credentials.
// The kubelet's and up's RSS is the median of 10 samples a second apart, after 5 s of settling; the joined kubelet's
// again ~30 s after its pods ran (once V8's memory reducer has collected the scale-up's garbage). Every process runs
// without NODE_EXTRA_CA_CERTS, as under systemd; one kubelet restart with it shows what it costs.
// Run as root after `npm run build`: npm run bench:footprint   (BENCH_SIZES=0,30,110, BENCH_RUNTIMES=tsx,compiled)
import fs from 'node:fs';
import path from 'node:path';

import type { NodeList, PodList } from 'kubernetes-types/core/v1.js';

import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO, TestNode } from '../e2e/harness.js';
import { start, waitFor } from '../e2e/proc.js';
import { UpNode } from '../e2e/up-node.js';
import { clearRuntime, IDLE_CMD, podManifest, runBench } from './bench-node.js';
import { childCpuSeconds, cpuSeconds, percentile, rssKiB } from './stats.js';
import { UpstreamKubelet, upstreamKubelet } from './upstream-kubelet.js';

const SIZES = (process.env.BENCH_SIZES ?? '0,30,110').split(',').map(Number);
const RUNTIMES = (process.env.BENCH_RUNTIMES ?? 'tsx,compiled').split(',') as ('tsx' | 'compiled')[];
const SETTLE_MS = 5000;
/** After settling, RSS is sampled once a second for this long (the median is the figure: V8's heap grows and shrinks by a few MiB around its collections) and CPU measured over it. */
const SAMPLE_MS = 10_000;
const MiB = (kib: number): number => kib / 1024;
/** A kubelet's CPU seconds, what it ran (mount, …) included. */
const kubeletCpu = (pid: number): number => cpuSeconds(pid) + childCpuSeconds(pid);
/**
 * The processes run with the environment a systemd unit gives them: no NODE_EXTRA_CA_CERTS (this machine's shell sets
 * it to the system bundle; node reads and parses it before any of our code runs). A restart of the kubelet with it set
 * is measured on its own row.
 */
const EXTRA_CA = process.env.NODE_EXTRA_CA_CERTS;
delete process.env.NODE_EXTRA_CA_CERTS;
/** Pods of the cluster whose containers are all ready. */
const readyPods = (c: { kubectl(args: string[]): string }): number =>
  (JSON.parse(c.kubectl(['get', 'pods', '-o', 'json'])) as PodList).items.filter(
    (p) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((x) => x.ready),
  ).length;
const nodeReady = (c: TestCluster): boolean =>
  (JSON.parse(c.kubectl(['get', 'nodes', '-o', 'json'])) as NodeList).items.some((n) =>
    n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The kubelet's log line when its file source first reports the static pod, with the line's own timestamp. */
const FILE_SOURCE_REPORTED = /^(\S+) INFO kubelet: pod source file reports 1 pod\(s\)/m;
/** The kubelet's Started event for the pod's container (its standalone event recorder logs events). */
const CONTAINER_STARTED = /^(\S+) INFO kubelet: event Normal Started pod\/\S+: Started container/m;

/** A settled process: its median RSS and its CPU per second over SAMPLE_MS. */
async function settled(pid: number, settleMs = SETTLE_MS): Promise<{ rssMiB: number; cpuMsPerS: number }> {
  await sleep(settleMs);
  const c0 = cpuSeconds(pid);
  const t0 = Date.now();
  const rss: number[] = [];
  while (Date.now() - t0 < SAMPLE_MS) {
    rss.push(MiB(rssKiB(pid)));
    await sleep(1000);
  }
  return { rssMiB: percentile(rss, 50), cpuMsPerS: ((cpuSeconds(pid) - c0) * 1000) / ((Date.now() - t0) / 1000) };
}

interface Figures {
  kubeletIdleMiB: number;
  firstSeenMs: number;
  firstSandboxMs: number;
  firstRunningMs: number;
  restartSeenMs: number;
  restartSeenWithCaMs: number;
  kubeletMiB: Record<number, number>;
  kubeletLaterMiB: Record<number, number>;
  kubeletIdleCpu: Record<number, number>;
  cpuPerPodMs: Record<number, number>;
  proxyMiB: number;
  apiserverMiB: number;
  apiserverStartMs: number;
  upMiB: number;
  upStartMs: number;
}

/** Fresh starts of the kubelet timed (its root dir removed before each); the figures are their medians. */
const FIRST_STARTS = 3;

/** A fresh node with the image pulled and one static pod manifest, first.yaml, for a kubelet's first start. */
async function withFirstPod(fn: (node: TestNode) => Promise<void>): Promise<void> {
  const node = new TestNode('fp');
  try {
    await node.start();
    await node.cri.pullImage(APP_IMAGE, null);
    fs.writeFileSync(
      path.join(node.manifests, 'first.yaml'),
      podManifest('first', `  - name: main\n    image: ${APP_IMAGE}\n    command: ['/bin/sh', '-c', "${IDLE_CMD}"]\n`),
    );
    await fn(node);
  } finally {
    await node.cleanup();
  }
}

/** `tskube agent` alone: one static pod in the manifest dir at start, timed to its sandbox and running container; then idle without pods. */
async function standaloneKubelet(f: Partial<Figures>): Promise<void> {
  await withFirstPod(async (node) => {
    const seen: number[] = [];
    const sandbox: number[] = [];
    const running: number[] = [];
    for (let i = 0; i < FIRST_STARTS; i++) {
      if (i > 0) {
        // As before the first: no kubelet state, no pod in the runtime.
        await node.stopKubelet();
        await clearRuntime(node);
        fs.rmSync(node.kubeletRoot, { recursive: true, force: true });
      }
      const from = i > 0 ? node.kubeletLog().length : 0;
      const log = (): string => node.kubeletLog().slice(from);
      const t0 = Date.now();
      node.startKubelet();
      // Until the pod's sync begins only the kubelet's log is read (a CRI call every 10 ms from here slowed the very
      // start it timed by 150–200 ms on 2 cores); the times are the log lines' own.
      await waitFor(() => FILE_SOURCE_REPORTED.test(log()), 60_000, 10, 'the kubelet reading its manifests');
      seen.push(Date.parse(FILE_SOURCE_REPORTED.exec(log())![1]!) - t0);
      await waitFor(async () => (await node.cri.listPodSandbox()).length > 0, 60_000, 25, 'first sandbox');
      sandbox.push(Date.now() - t0);
      await waitFor(() => CONTAINER_STARTED.test(log()), 60_000, 25, 'first container started');
      running.push(Date.parse(CONTAINER_STARTED.exec(log())![1]!) - t0);
    }
    process.stderr.write(
      `${process.env.TSKUBE_CLI}: fresh starts, ms to sync / sandbox / running: ${seen.join(' ')} / ${sandbox.join(' ')} / ${running.join(' ')}\n`,
    );
    f.firstSeenMs = percentile(seen, 50);
    f.firstSandboxMs = percentile(sandbox, 50);
    f.firstRunningMs = percentile(running, 50);
    // Restarts (the certificate and directories exist): with NODE_EXTRA_CA_CERTS, then without (that one stays).
    f.restartSeenWithCaMs = EXTRA_CA ? await restartSeen(node, { NODE_EXTRA_CA_CERTS: EXTRA_CA }) : NaN;
    f.restartSeenMs = await restartSeen(node, {});
    fs.rmSync(path.join(node.manifests, 'first.yaml'));
    await waitFor(async () => (await node.cri.listPodSandbox()).length === 0, 60_000, 200, 'the static pod gone');
    f.kubeletIdleMiB = (await settled(node.kubelet!.pid)).rssMiB;
  });
}

/** Restarts the kubelet (its static pod running): ms from the start to its file source's first report. */
async function restartSeen(node: TestNode, env: NodeJS.ProcessEnv): Promise<number> {
  await node.stopKubelet();
  const from = node.kubeletLog().length;
  const t0 = Date.now();
  node.startKubelet([], env);
  await waitFor(
    () => FILE_SOURCE_REPORTED.test(node.kubeletLog().slice(from)),
    60_000,
    10,
    'the restarted kubelet reading its manifests',
  );
  return Date.parse(FILE_SOURCE_REPORTED.exec(node.kubeletLog().slice(from))![1]!) - t0;
}

/** A node joined to the dev apiserver: the kubelet at each size of a deployment, the proxy and the apiserver idle beside it. */
async function joinedNode(f: Partial<Figures>): Promise<void> {
  const cluster = new TestCluster({ kubeletConfig: 'maxPods: 120\n' });
  f.kubeletMiB = {};
  f.kubeletLaterMiB = {};
  f.cpuPerPodMs = {};
  f.kubeletIdleCpu = {};
  try {
    await cluster.start(async (node) => void (await node.cri.pullImage(APP_IMAGE, null)));
    const kubelet = cluster.node.kubelet!.pid;
    await waitFor(() => nodeReady(cluster), 120_000, 500, 'node Ready');
    const proxy = cluster.node.startProxy([
      `--kubeconfig=${path.join(cluster.as.dir, 'pki', 'kube-proxy.kubeconfig')}`,
      '--cluster-cidr=10.244.0.0/16',
    ]);
    cluster.kubectl(['create', 'deployment', 'load', `--image=${APP_IMAGE}`, '--replicas=0', '--', 'sleep', '36000']);
    let prev = 0;
    for (const n of SIZES) {
      const c0 = kubeletCpu(kubelet);
      cluster.kubectl(['scale', 'deployment', 'load', `--replicas=${n}`]);
      await waitFor(() => readyPods(cluster) === n, 15 * 60_000, 500, `${n} pods running`);
      if (n > prev) f.cpuPerPodMs[n] = ((kubeletCpu(kubelet) - c0) * 1000) / (n - prev);
      prev = n;
      const s = await settled(kubelet);
      f.kubeletMiB[n] = s.rssMiB;
      f.kubeletIdleCpu[n] = s.cpuMsPerS;
      // Again ~30 s after the pods ran: a scale-up's garbage stays in V8's old space until its memory reducer collects it.
      f.kubeletLaterMiB[n] = (await settled(kubelet, 15_000)).rssMiB;
    }
    f.proxyMiB = MiB(rssKiB(proxy.pid));
    f.apiserverMiB = MiB(rssKiB(cluster.as.proc!.pid));
  } finally {
    await cluster.cleanup();
  }
}

/**
 * The upstream kubelet alone, as standaloneKubelet runs tskube's: fresh starts timed to the first sandbox and to the
 * container's CRI started_at, then idle RSS once the pod is gone.
 */
async function upstreamStandalone(binary: string, f: Partial<Figures>): Promise<void> {
  await withFirstPod(async (node) => {
    const k = new UpstreamKubelet(node, binary);
    try {
      const sandbox: number[] = [];
      const running: number[] = [];
      for (let i = 0; i < FIRST_STARTS; i++) {
        if (i > 0) {
          await k.stop();
          await clearRuntime(node);
          fs.rmSync(k.dir, { recursive: true, force: true });
        }
        const t0 = Date.now();
        const started = k.start();
        await waitFor(async () => (await node.cri.listPodSandbox()).length > 0, 60_000, 25, 'first sandbox');
        sandbox.push(Date.now() - t0);
        const c = await waitFor(
          async () => (await node.cri.listContainers()).find((x) => x.state === 'CONTAINER_RUNNING'),
          60_000,
          25,
          'first container running',
        );
        running.push(Number((await node.cri.containerStatus(c.id)).started_at) / 1e6 - t0);
        await started;
      }
      process.stderr.write(
        `upstream: fresh starts, ms to sandbox / running: ${sandbox.join(' ')} / ${running.join(' ')}\n`,
      );
      f.firstSandboxMs = percentile(sandbox, 50);
      f.firstRunningMs = percentile(running, 50);
      fs.rmSync(path.join(node.manifests, 'first.yaml'));
      await waitFor(
        async () => !(await node.cri.listContainers()).some((c) => c.state === 'CONTAINER_RUNNING'),
        60_000,
        200,
        'the static pod stopped',
      );
      f.kubeletIdleMiB = (await settled(k.pid)).rssMiB;
    } finally {
      await k.stop();
    }
  });
}

/** The upstream kubelet joined to the dev apiserver with the node's credentials, the same scale-up as joinedNode. */
async function upstreamJoined(binary: string, f: Partial<Figures>): Promise<void> {
  const cluster = new TestCluster({ kubelet: false });
  f.kubeletMiB = {};
  f.kubeletLaterMiB = {};
  f.cpuPerPodMs = {};
  f.kubeletIdleCpu = {};
  let k: UpstreamKubelet | undefined;
  try {
    await cluster.start(async (node) => void (await node.cri.pullImage(APP_IMAGE, null)));
    k = new UpstreamKubelet(cluster.node, binary);
    await k.start({
      kubeconfig: path.join(cluster.as.dir, 'pki', `node-${cluster.node.name}.kubeconfig`),
      config: 'maxPods: 120\n',
    });
    await waitFor(() => nodeReady(cluster), 120_000, 500, 'node Ready');
    cluster.kubectl(['create', 'deployment', 'load', `--image=${APP_IMAGE}`, '--replicas=0', '--', 'sleep', '36000']);
    let prev = 0;
    for (const n of SIZES) {
      const c0 = kubeletCpu(k.pid);
      cluster.kubectl(['scale', 'deployment', 'load', `--replicas=${n}`]);
      await waitFor(() => readyPods(cluster) === n, 15 * 60_000, 500, `${n} pods running`);
      if (n > prev) f.cpuPerPodMs[n] = ((kubeletCpu(k.pid) - c0) * 1000) / (n - prev);
      prev = n;
      const st = await settled(k.pid);
      f.kubeletMiB[n] = st.rssMiB;
      f.kubeletIdleCpu[n] = st.cpuMsPerS;
      f.kubeletLaterMiB[n] = (await settled(k.pid, 15_000)).rssMiB;
    }
  } finally {
    await k?.stop();
    await cluster.cleanup();
  }
}

/**
 * The floor of the kubelet's CPU per API pod started: bench/pod-floor.ts (a bare script doing the CRI start calls and
 * one status patch per pod) in the kubelet's place, driven by the same apiserver, containerd and scale-up. Its CPU per
 * pod, by step.
 */
async function podFloor(): Promise<Record<number, number>> {
  const cluster = new TestCluster({ kubelet: false });
  const perPod: Record<number, number> = {};
  try {
    await cluster.start(async (node) => void (await node.cri.pullImage(APP_IMAGE, null)));
    const log = path.join(cluster.node.dir, 'pod-floor.log');
    const steps = SIZES.filter((n) => n > 0);
    const floor = start(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'bench/pod-floor.ts'),
        cluster.as.kubeconfig,
        cluster.node.socket,
        cluster.node.name,
        cluster.node.podLogsDir,
        steps.join(','),
      ],
      log,
      { netns: cluster.node.netns, cwd: REPO },
    );
    const lines = (): { ready?: true; pods?: number; cpuMs?: number }[] =>
      fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { ready?: true; pods?: number; cpuMs?: number });
    const died = floor.exited.then((code) => {
      throw new Error(`bench/pod-floor.ts exited (${code}): ${fs.readFileSync(log, 'utf8').slice(-2000)}`);
    });
    died.catch(() => undefined);
    const until = async (what: string, ok: () => boolean): Promise<void> =>
      void (await Promise.race([waitFor(ok, 15 * 60_000, 200, what), died]));
    try {
      await until('pod-floor ready', () => lines().some((l) => l.ready));
      cluster.kubectl(['create', 'deployment', 'load', `--image=${APP_IMAGE}`, '--replicas=0', '--', 'sleep', '36000']);
      let prev = 0;
      for (const n of steps) {
        cluster.kubectl(['scale', 'deployment', 'load', `--replicas=${n}`]);
        await until(`pod-floor: ${n} pods started`, () => lines().some((l) => l.pods === n));
        perPod[n] = lines().find((l) => l.pods === n)!.cpuMs! / (n - prev);
        prev = n;
      }
    } finally {
      floor.child.kill('SIGKILL');
      await floor.exited;
    }
  } finally {
    await cluster.cleanup();
  }
  return perPod;
}

/** `tskube apiserver` alone: spawn to "serving on". */
async function apiserverStart(f: Partial<Figures>): Promise<void> {
  const { ApiServerNode } = await import('../e2e/apiserver-node.js');
  // Its own namespace (made and deleted by it).
  const as = new ApiServerNode();
  try {
    const t0 = Date.now();
    const started = as.start();
    await waitFor(
      () =>
        fs.existsSync(path.join(as.dir, 'apiserver.log')) &&
        /serving on/.test(fs.readFileSync(path.join(as.dir, 'apiserver.log'), 'utf8')),
      60_000,
      10,
      'serving on',
    );
    f.apiserverStartMs = Date.now() - t0;
    await started;
  } finally {
    await as.cleanup();
  }
}

/** `tskube up` with its static pod and a deployment of 2: everything in one process. */
async function up(f: Partial<Figures>): Promise<void> {
  const n = new UpNode();
  try {
    await n.create();
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(n.manifests, 'web.yaml'));
    const t0 = Date.now();
    await n.run();
    f.upStartMs = Date.now() - t0;
    n.kubectl(['create', 'deployment', 'hello', `--image=${APP_IMAGE}`, '--replicas=2']);
    await waitFor(() => readyPods(n) === 3, 120_000, 500, '3 pods running');
    f.upMiB = (await settled(n.proc!.pid)).rssMiB;
  } finally {
    await n.stop();
  }
}

type Row = [name: string, get: (f: Figures) => number, unit: string, goal: string];

/** tsx, compiled and the upstream kubelet side by side; the ratio is compiled / upstream where upstream ran the row. */
function table(rows: Row[], by: Record<string, Figures>): string {
  const cell = (f: Figures | undefined, get: (f: Figures) => number, unit: string): string => {
    const v = f ? get(f) : NaN;
    return (Number.isFinite(v) ? `${v.toFixed(1)} ${unit}` : '—').padStart(10);
  };
  const head = `${'measure'.padEnd(58)} | ${'tsx'.padStart(10)} | ${'compiled'.padStart(10)} | ${'upstream'.padStart(10)} | ratio | goal`;
  const lines = rows.map(([name, get, unit, goal]) => {
    const r = by.compiled && by.upstream ? get(by.compiled) / get(by.upstream) : NaN;
    return `${name.padEnd(58)} | ${cell(by.tsx, get, unit)} | ${cell(by.compiled, get, unit)} | ${cell(by.upstream, get, unit)} | ${(Number.isFinite(r) ? r.toFixed(2) : '—').padStart(5)} | ${goal}`;
  });
  return [head, '-'.repeat(head.length), ...lines].join('\n');
}

runBench(async () => {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  if (!fs.existsSync(path.join(REPO, 'dist/cli/tskube.js')))
    throw new Error('no compiled build: run `npm run build` first');
  const figures: Record<string, Partial<Figures>> = {};
  // The start times first, for every runtime: on a machine in the same state, not right after 110 pods were removed.
  for (const rt of RUNTIMES) {
    process.env.TSKUBE_CLI = rt;
    await standaloneKubelet((figures[rt] = {}));
  }
  const by: Record<string, Figures> = {};
  for (const rt of RUNTIMES) {
    process.env.TSKUBE_CLI = rt;
    const f = figures[rt]!;
    await joinedNode(f);
    await apiserverStart(f);
    await up(f);
    by[rt] = f as Figures;
    process.stderr.write(`${rt}: ${JSON.stringify(f)}\n`);
  }
  const fixture = upstreamKubelet();
  if ('binary' in fixture) {
    const f: Partial<Figures> = {};
    await upstreamStandalone(fixture.binary, f);
    await upstreamJoined(fixture.binary, f);
    by.upstream = f as Figures;
    process.stderr.write(`upstream: ${JSON.stringify(f)}\n`);
  }
  const floor = await podFloor();
  process.stderr.write(`floor: ${JSON.stringify(floor)}\n`);
  const big = SIZES[SIZES.length - 1]!;
  const rows: Row[] = [
    ['kubelet alone, idle: RSS', (f) => f.kubeletIdleMiB, 'MiB', '≤ 1.0× upstream'],
    [
      `kubelet start → first static pod sync begins (median of ${FIRST_STARTS})`,
      (f) => f.firstSeenMs,
      'ms',
      '≤ 300 ms',
    ],
    ['kubelet start → first static pod sandbox', (f) => f.firstSandboxMs, 'ms', ''],
    ['kubelet start → first static pod running', (f) => f.firstRunningMs, 'ms', ''],
    ['kubelet restart → static pod sync begins', (f) => f.restartSeenMs, 'ms', ''],
    ['  the same with NODE_EXTRA_CA_CERTS (shell)', (f) => f.restartSeenWithCaMs, 'ms', ''],
    ...SIZES.flatMap((n): Row[] => {
      const goal = n === big ? '≤ 1.0× upstream' : '';
      return [
        [`kubelet with ${n} API pods: RSS`, (f) => f.kubeletMiB[n]!, 'MiB', goal],
        ['  the same 30 s later', (f) => f.kubeletLaterMiB[n]!, 'MiB', goal],
      ];
    }),
    ...SIZES.filter((n) => n > 0).map((n): Row => [
      `kubelet CPU per API pod started (→${n})`,
      (f) => f.cpuPerPodMs[n]!,
      'ms',
      '≤ 1.0× upstream',
    ]),
    ...SIZES.map((n): Row => [`kubelet idle CPU with ${n} API pods (ms/s)`, (f) => f.kubeletIdleCpu[n]!, 'ms', '']),
    ['kube-proxy idle: RSS', (f) => f.proxyMiB, 'MiB', ''],
    ['apiserver (with a node): RSS', (f) => f.apiserverMiB, 'MiB', ''],
    ['apiserver start → serving', (f) => f.apiserverStartMs, 'ms', ''],
    ['tskube up, 3 pods: RSS', (f) => f.upMiB, 'MiB', '≤ 100 MiB'],
    ['tskube up start → "tskube is up"', (f) => f.upStartMs, 'ms', ''],
  ];
  process.stdout.write(
    `tskube footprint: compiled (dist/, as users run it), through tsx, and the upstream kubelet v1.37.2 (the kubelet rows), same run${'skipped' in fixture ? `\nupstream column skipped: ${fixture.skipped}` : ''}\n\n${table(rows, by)}\n`,
  );
  const kubelet = by.compiled ?? by.tsx!;
  process.stdout.write(
    `\nfloor of the CPU per API pod started (bench/pod-floor.ts in the kubelet's place: a bare script with its CRI and REST clients and engine settings; per pod a watch event, RunPodSandbox, PodSandboxStatus, CreateContainer, StartContainer, one status patch):\n${Object.entries(
      floor,
    )
      .map(
        ([n, ms]) =>
          `  →${n}: floor ${ms.toFixed(1)} ms; kubelet (${by.compiled ? 'compiled' : 'tsx'}) ${kubelet.cpuPerPodMs[Number(n)]!.toFixed(1)} ms = ${(kubelet.cpuPerPodMs[Number(n)]! / ms).toFixed(2)}× the floor`,
      )
      .join('\n')}\n`,
  );
  process.stdout.write('\nprobes (220 a second) beside the upstream kubelet: npm run bench:probes\n');
});
