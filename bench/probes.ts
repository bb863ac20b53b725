// Benchmark: probe timing and cost. N = 110 static pods (BENCH_PODS), each with
// an httpGet readiness and a tcpSocket liveness probe at periodSeconds 1
// (220 probes/s), for 60 s (BENCH_SECONDS), on real containerd, made in turn by
// tskube's kubelet (compiled, as users run it), the upstream kubelet v1.37.2 (the
// fixture) and a bare script (the floor). The probes go to one listener in the
// node's namespace (bench/probe-target.ts), which reads the period error from
// their arrivals and the prober's CPU share and RSS from /proc, the same way
// for all three.
// Run as root: npm run bench:probes
import fs from 'node:fs';
import path from 'node:path';

import { APP_IMAGE, REPO, type TestNode, writeManifestAtomic } from '../e2e/harness.js';
import { type Proc, start, stopPid, waitFor } from '../e2e/proc.js';
import { clearRuntime, IDLE_CMD, podManifest, runBench, useCompiledCli, withBenchNode } from './bench-node.js';
import { mark } from './kubelet-turns.js';
import type { ProbeWindow } from './probe-window.js';
import { upstreamKubelet, upstreamRunner } from './upstream-kubelet.js';

const N = Number(process.env.BENCH_PODS ?? 110);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const PORT0 = 20_000;

const manifest = (host: string, i: number): string =>
  podManifest(
    `probed-${i}`,
    `  - name: main
    image: ${APP_IMAGE}
    command: ["/bin/sh", "-c", ${JSON.stringify(IDLE_CMD)}]
    readinessProbe: {httpGet: {host: "${host}", path: /${i}, port: ${PORT0}}, periodSeconds: 1}
    livenessProbe: {tcpSocket: {host: "${host}", port: ${PORT0 + 1 + i}}, periodSeconds: 1}
`,
  );

interface Prober {
  name: string;
  /** Starts probing; resolves with the PID to measure. */
  start(): Promise<number>;
  stop(): Promise<void>;
}

/** One prober's window: the target listens first (a liveness probe refused would restart its pod). */
async function measure(node: TestNode, p: Prober): Promise<ProbeWindow> {
  const pidFile = path.join(node.dir, `prober-${p.name}.pid`);
  fs.writeFileSync(pidFile, '');
  const log = path.join(node.dir, `probe-target-${p.name}.log`);
  const target: Proc = start(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO, 'bench/probe-target.ts'),
      node.nodeIP,
      String(PORT0),
      String(N),
      String(SECONDS),
      pidFile,
    ],
    log,
    { netns: node.netns, cwd: REPO },
  );
  const text = (): string => fs.readFileSync(log, 'utf8');
  try {
    await waitFor(() => text().includes('listening'), 30_000, 100, 'the probe target listening');
    fs.writeFileSync(pidFile, String(await p.start()));
    const code = await Promise.race([
      target.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), (SECONDS + 1200) * 1000).unref()),
    ]);
    if (code !== 0) throw new Error(`the probe target under ${p.name}: ${code}: ${text().slice(-2000)}`);
    const json = text()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop();
    return JSON.parse(json!) as ProbeWindow;
  } finally {
    await stopPid(target.pid, 2000);
    await p.stop();
    for (const f of fs.readdirSync(node.manifests)) fs.rmSync(path.join(node.manifests, f));
    await clearRuntime(node);
  }
}

runBench(() => {
  useCompiledCli();
  return withBenchNode(async (node) => {
    const writePods = (): void => {
      for (let i = 0; i < N; i++) writeManifestAtomic(node.manifests, `probed-${i}.yaml`, manifest(node.nodeIP, i));
    };
    const probers: Prober[] = [
      {
        name: 'tskube',
        start: async () => {
          writePods();
          return node.startKubelet(['--max-pods=120']).pid;
        },
        stop: () => node.stopKubelet(),
      },
    ];
    const fixture = upstreamKubelet();
    if ('binary' in fixture)
      probers.push(upstreamRunner(node, fixture.binary, { config: 'maxPods: 120\n' }, writePods));
    let floor: Proc | undefined;
    probers.push({
      name: 'floor',
      start: async () => {
        floor = start(
          process.execPath,
          ['--import', 'tsx', path.join(REPO, 'bench/probe-floor.ts'), node.nodeIP, String(PORT0), String(N)],
          path.join(node.dir, 'probe-floor.log'),
          { netns: node.netns, cwd: REPO },
        );
        return floor.pid;
      },
      stop: async () => {
        if (floor) await stopPid(floor.pid, 2000);
      },
    });
    const w: Record<string, ProbeWindow> = {};
    for (const p of probers) w[p.name] = await measure(node, p);

    const out = (s = ''): boolean => process.stdout.write(`${s}\n`);
    out(
      `probes: ${N} pods x (httpGet readiness + tcpSocket liveness), periodSeconds 1, ${SECONDS} s; containerd ${(await node.cri.version()).runtime_version}`,
    );
    if ('skipped' in fixture) out(`upstream row skipped: ${fixture.skipped}`);
    out();
    out('prober   | intervals | err p50 ms | err p99 ms | err max ms | CPU of 1 core | RSS');
    for (const [name, x] of Object.entries(w))
      out(
        `${name.padEnd(8)} | ${String(x.runs).padStart(9)} | ${x.p50.toFixed(1).padStart(10)} | ${x.p99.toFixed(1).padStart(10)} | ${x.max.toFixed(1).padStart(10)} | ${x.cpuPct.toFixed(1).padStart(12)}% | ${x.rssMiB.toFixed(1)} MiB`,
      );
    out();
    const t = w.tskube!;
    if (w.upstream) {
      const cpu = t.cpuPct / w.upstream.cpuPct;
      out(`tskube / upstream: CPU ${mark(cpu, 1)}, p99 error ${(t.p99 / Math.max(w.upstream.p99, 0.1)).toFixed(2)}×`);
    }
    out(
      `tskube / floor: CPU ${(t.cpuPct / w.floor!.cpuPct).toFixed(2)}×, p99 error ${(t.p99 / Math.max(w.floor!.p99, 0.1)).toFixed(2)}×`,
    );
    out(
      "\nerror = time between two arrivals of the same probe at the target minus the period. A kubelet's CPU includes its PLEG relist and status work besides the probes; the floor is setInterval with bare http.get/net.connect (run through tsx).",
    );
  });
});
