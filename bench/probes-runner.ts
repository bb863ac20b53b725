// bench/probes, the part that runs inside the node's network namespace (so
// probes reach pod IPs): a kubelet in this process with N static pods, each
// with an httpGet readiness and a tcpSocket liveness probe at periodSeconds 1.
// It measures the probe period error from the prober's own run times, the
// process CPU and RSS, then the same probes from a bare script (the floor).
// Prints one JSON line. Started by bench/probes.ts.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

import { CriClient } from '../agent/cri/client.js';
import { Kubelet } from '../agent/kubelet.js';
import { KubeletMetrics } from '../agent/metrics.js';
import { applyEngineSettings, KUBELET_ENGINE } from '../cli/engine-flags.js';
import { waitFor } from '../e2e/proc.js';
import { LogEventRecorder } from '../kube/events.js';
import { createLogger } from '../kube/log.js';
import { podManifest } from './bench-node.js';
import { percentile } from './stats.js';

// The V8 settings `tskube agent` starts with; the floor shares the process and so the same engine.
applyEngineSettings(KUBELET_ENGINE);

const [socket, dir, image, nArg, secArg] = process.argv.slice(2);
const N = Number(nArg);
const SECONDS = Number(secArg);

const manifest = (name: string): string =>
  podManifest(
    name,
    `  - name: web
    image: ${image}
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
    livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`,
  );

interface Window {
  errors: number[];
  cpuPct: number;
  rssMiB: number;
  runs: number;
}

/** Interval errors (actual - period) from per-key run times, over [from, to). */
function errorsOf(runs: Map<string, number[]>, periodMs: number, from: number, to: number): number[] {
  const out: number[] = [];
  for (const ts of runs.values()) {
    const w = ts.filter((t) => t >= from && t < to);
    for (let i = 1; i < w.length; i++) out.push(w[i]! - w[i - 1]! - periodMs);
  }
  return out;
}

async function measure(seconds: number, runs: Map<string, number[]>): Promise<Window> {
  const rss: number[] = [];
  const t0 = Date.now();
  const c0 = process.cpuUsage();
  const timer = setInterval(() => rss.push(process.memoryUsage().rss), 1000);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  clearInterval(timer);
  const c = process.cpuUsage(c0);
  const t1 = Date.now();
  const errors = errorsOf(runs, 1000, t0, t1);
  return {
    errors,
    cpuPct: ((c.user + c.system) / 1000 / (t1 - t0)) * 100,
    rssMiB: Math.max(...rss) / 1024 / 1024,
    runs: errors.length,
  };
}

/** The floor: the same probes from setInterval with bare http.get and net.connect. */
function floorProbes(ips: string[], runs: Map<string, number[]>): () => void {
  const timers: NodeJS.Timeout[] = [];
  ips.forEach((ip, i) => {
    const start = (key: string, fn: () => void): void => {
      setTimeout(
        () => {
          const tick = (): void => {
            (runs.get(key) ?? runs.set(key, []).get(key)!).push(Date.now());
            fn();
          };
          tick();
          timers.push(setInterval(tick, 1000));
        },
        (i / ips.length) * 1000,
      );
    };
    start(`${ip}/http`, () =>
      http
        .get(
          {
            host: ip,
            port: 8080,
            path: '/',
            timeout: 1000,
            headers: { 'User-Agent': 'kube-probe/1.32', Accept: '*/*' },
            agent: false,
          },
          (res) => res.resume(),
        )
        .on('error', () => {}),
    );
    start(`${ip}/tcp`, () => {
      const s = net.connect({ host: ip, port: 8080 }, () => s.destroy());
      s.on('error', () => {});
    });
  });
  return () => timers.forEach((t) => clearInterval(t));
}

async function main(): Promise<void> {
  const manifests = path.join(dir!, 'bench-manifests');
  fs.mkdirSync(manifests, { recursive: true });
  for (let i = 0; i < N; i++) fs.writeFileSync(path.join(manifests, `p${i}.yaml`), manifest(`p${i}`));
  const cri = new CriClient({ endpoint: socket!, timeoutMs: 120_000 });
  const log = createLogger('kubelet', { sink: () => {} });
  const runs = new Map<string, number[]>();
  const kubelet = new Kubelet({
    cri,
    log,
    events: new LogEventRecorder(log),
    metrics: new KubeletMetrics(),
    node: {
      nodeName: 'bench',
      hostIP: '127.0.0.1',
      podLogsDir: path.join(dir!, 'pod-logs'),
      rootDir: path.join(dir!, 'kubelet'),
    },
    manifestPath: manifests,
    onProbeRun: (key, at) => (runs.get(key) ?? runs.set(key, []).get(key)!).push(at),
  });
  await kubelet.start();
  const t0 = Date.now();
  await waitFor(
    () =>
      kubelet.workers.size === N &&
      [...kubelet.workers.values()].every(
        (w) =>
          w.lastState?.containers.some((c) => c.state === 'running') &&
          kubelet.prober.ready(w.pod, 'web', w.lastState.containers[0]!.id),
      ),
    600_000,
    500,
    `${N} pods ready`,
  );
  const readyAfter = Date.now() - t0;
  await new Promise((r) => setTimeout(r, 5000)); // settle
  const k = await measure(SECONDS, runs);
  const ips = [...kubelet.workers.values()].map((w) => w.lastState!.sandboxes[0]!.ip);
  await kubelet.stop();
  // Floor: the same 2N probes per second from a bare script, in the same process, containers still up.
  const floorRuns = new Map<string, number[]>();
  const stop = floorProbes(ips, floorRuns);
  await new Promise((r) => setTimeout(r, 2000));
  const f = await measure(Math.min(SECONDS, 30), floorRuns);
  stop();
  cri.close();
  const summary = (w: Window) => ({
    p50: percentile(w.errors, 50),
    p99: percentile(w.errors, 99),
    max: Math.max(...w.errors),
    min: Math.min(...w.errors),
    runs: w.runs,
    cpuPct: w.cpuPct,
    rssMiB: w.rssMiB,
  });
  process.stdout.write(
    JSON.stringify({ n: N, seconds: SECONDS, readyAfterMs: readyAfter, kubelet: summary(k), floor: summary(f) }) + '\n',
  );
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`runner failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
