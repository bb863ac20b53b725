// bench/proxy-sync, the part that runs inside a throwaway network namespace
// (its iptables and nftables are the namespace's own). Prints one JSON line.
// A dev apiserver (in this process) grows to 1k, 10k and 30k Services × 10
// endpoints (BENCH_SIZES); at each size a kube-proxy of one mode (argv[2]:
// nftables, legacy = iptables on iptables-legacy, nft = iptables on
// iptables-nft; upstream-nftables and upstream-legacy: the upstream kube-proxy
// fixture in those modes, bench/upstream-proxy.ts) runs in its own process
// (bench/proxy-sync-proxy.ts):
// 1. cold start: no rules in the kernel, from the informers' sync to the end
//    of the first (full) sync;
// 2. one-endpoint changes (15 in nftables mode, 5 in iptables modes): from
//    the EndpointSlice update request to the end of the sync that put the
//    new endpoint in the kernel;
// 3. a restart over its own rules (what a kube-proxy upgrade does);
// and, in nftables mode, the floor of a change: the same kind of update seen
// by a bare watcher (bench/proxy-sync-floor.ts), small before the proxy
// starts, and as large (resident) as the proxy in turns with its changes;
// with the proxy process's RSS and CPU (its own, and its nft/iptables
// children's). A cold start longer than BENCH_COLD_BUDGET_MS ends the series.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import readline from 'node:readline';

import { startApiServer } from '../apiserver/main.js';
import { REPO } from '../e2e/harness.js';
import { type KObj, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { groupChainOf } from '../proxy/nftables/groups.js';
import { servicePortBase } from '../proxy/nftables/names.js';
import { legacyIptablesDir, UpstreamProxy } from './upstream-proxy.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,30000').split(',').map(Number);
const EPS = 10;
/** One-endpoint changes per size: 15 in nftables mode (its medians are a few ms, so noise matters), 5 in iptables mode. */
const MODE = (process.argv[2] ?? 'nftables') as 'nftables' | 'legacy' | 'nft' | 'upstream-nftables' | 'upstream-legacy';
/** The upstream kube-proxy's binary when MODE is one of its modes. */
const UPSTREAM = MODE.startsWith('upstream-') ? process.env.BENCH_UPSTREAM_PROXY : undefined;
/** The rules' backend, whichever proxy writes them. */
const BACKEND = MODE.replace(/^upstream-/, '') as 'nftables' | 'legacy' | 'nft';
const CHANGES = Number(process.env.BENCH_CHANGES) || (BACKEND === 'nftables' ? 15 : 5);
/** This process's (the apiserver's) time in garbage collection so far. */
const runnerGc = { ms: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) runnerGc.ms += e.duration;
}).observe({ entryTypes: ['gc'] });
const BUDGET_MS = Number(process.env.BENCH_COLD_BUDGET_MS ?? 300_000);

/** Fractional wall-clock ms, comparable between processes (the proxy's sync events use the same). */
const wallMs = (): number => performance.timeOrigin + performance.now();
const ip = (n: number, base: number): string => `${base}.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

interface SyncEvent {
  ev: 'sync';
  syncs: number;
  /** When the sync was called and when it returned (fractional wall-clock ms, as wallMs()). */
  begin: number;
  end: number;
  /** When the last EndpointSlice event reached the proxier. */
  sliceAt: number;
  at: number;
  full: boolean;
  changed: number;
  renderMs: number;
  applyMs: number;
  rssMiB: number;
  cpuMs: number;
  childCpuMs: number;
  /** Time in garbage collection so far, and how many major collections. */
  gcMs: number;
  gcMajor: number;
}

/** A child printing one JSON object per line, kept as events; next() waits for one without polling. */
class JsonLinesChild<E> {
  readonly events: E[] = [];
  /** Who waits for the next event (see next()). */
  private waiter: (() => void) | undefined;
  constructor(
    readonly child: ChildProcess,
    private readonly name: string,
    take: (line: unknown) => E | undefined,
  ) {
    readline.createInterface({ input: child.stdout! }).on('line', (l) => {
      const e = take(JSON.parse(l));
      if (e !== undefined) this.events.push(e);
      this.waiter?.();
    });
  }
  /**
   * The first event from index `from` on that matches, waited for without polling: a poll every millisecond wakes
   * this process while the child works, and on a 2-core machine that preempts the very process being measured.
   */
  async next(from: number, match: (e: E) => boolean, timeoutMs: number, what: string): Promise<E> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      const left = deadline - Date.now();
      if (this.child.exitCode !== null)
        throw new Error(`${this.name} exited (${this.child.exitCode}) while waiting for ${what}`);
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 1000));
        this.waiter = () => (clearTimeout(t), r());
      });
      this.waiter = undefined;
    }
  }
}

class ProxyProcess extends JsonLinesChild<SyncEvent> {
  startedAt = 0;
  constructor(kubeconfig: string) {
    const mode = MODE === 'nftables' ? 'nftables' : 'iptables';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'bench/proxy-sync-proxy.ts'), kubeconfig, mode],
      {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'inherit'],
        detached: true,
        env: { ...process.env, BENCH_IPT: MODE === 'legacy' ? 'legacy' : '' },
      },
    );
    super(child, 'the proxy', (l) => {
      const e = l as SyncEvent | { ev: 'start'; at: number };
      if (e.ev === 'sync') return e;
      this.startedAt = e.at;
      return undefined;
    });
  }
  last(): SyncEvent | undefined {
    return this.events.at(-1);
  }
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const done = new Promise((r) => this.child.once('exit', r));
    // The whole process group: an nft or iptables-restore it started must not go on in the background.
    process.kill(-this.child.pid!, 'SIGKILL');
    await done;
  }
}

/** A line of the floor watcher: once ready (with its RSS), then one per event. */
type FloorLine = { ready?: true; rssMiB?: number; at: number; name: string };

/**
 * A bare watcher (bench/proxy-sync-floor.ts) in a process of its own, timed on updates: from the update request to
 * its event there. With rssMiB it first grows to that resident size (the proxy's); with `watch` it watches that
 * collection and label selector instead of the proxy's EndpointSlices.
 */
class FloorWatcher extends JsonLinesChild<FloorLine> {
  rssMiB = 0;
  private constructor(kubeconfig: string, rssMiB: number, watch: string[]) {
    super(
      spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(REPO, 'bench/proxy-sync-floor.ts'),
          kubeconfig,
          String(Math.round(rssMiB)),
          ...watch,
        ],
        { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
      ),
      'the floor watcher',
      (l) => l as FloorLine,
    );
  }
  static async start(kubeconfig: string, rssMiB = 0, watch: string[] = []): Promise<FloorWatcher> {
    const w = new FloorWatcher(kubeconfig, rssMiB, watch);
    w.rssMiB = (await w.next(0, (e) => !!e.ready, 60_000, 'the floor watcher')).rssMiB!;
    return w;
  }
  /** One update of the object at url (changed by mutate), timed to its event here. */
  async time(client: KubeClient, url: string, mutate: (o: KObj) => void): Promise<number> {
    const cur = await client.get(url);
    mutate(cur);
    const from = this.events.length;
    const u0 = wallMs();
    await client.update(url, cur);
    const name = url.slice(url.lastIndexOf('/') + 1);
    return (await this.next(from, (e) => e.name === name, 60_000, `the floor watcher's event for ${name}`)).at - u0;
  }
  stop(): void {
    this.child.kill('SIGKILL');
  }
}

/** The ConfigMaps the proxy-sized floor watcher is timed on, one per change, about an EndpointSlice's size. */
const FLOOR_LABELS = { 'tskube-bench': 'floor' };
const FLOOR_SELECTOR = 'tskube-bench=floor';
const floorConfigMap = (k: number): string => `/api/v1/namespaces/default/configmaps/floor-${k}`;

/**
 * The floor of a one-endpoint change at this size: the same kind of update seen by a small bare watcher, CHANGES
 * times with the same pauses; no proxy runs.
 */
async function changeFloor(kubeconfig: string, client: KubeClient, n: number, first: number): Promise<number[]> {
  const watcher = await FloorWatcher.start(kubeconfig);
  try {
    const out: number[] = [];
    for (let k = first; k < first + CHANGES; k++) {
      await new Promise((r) => setTimeout(r, 1100));
      out.push(
        await watcher.time(
          client,
          `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/svc${(k * 991) % n}-x`,
          (o) => (o.endpoints[0].addresses = [ip(400_000 + k, 13)]),
        ),
      );
    }
    return out;
  } finally {
    watcher.stop();
  }
}

function clearRules(): void {
  execFileSync('nft', ['flush', 'ruleset']);
  for (const t of ['nat', 'filter'])
    for (const bin of ['iptables-legacy', 'iptables-nft'])
      for (const op of ['-F', '-X']) execFileSync(bin, ['-t', t, op]);
}

function inKernel(newIP: string, svc: string, clusterIP: string): boolean {
  if (UPSTREAM && BACKEND === 'nftables') {
    // Upstream's layout: a service's rule DNATs through a numgen map of its endpoints, or (with affinity) one rule
    // per endpoint chain.
    const table = execFileSync('nft', ['list', 'table', 'ip', 'kube-proxy'], { encoding: 'utf8', maxBuffer: 1 << 30 });
    return table.includes(`: ${newIP} . 8080`) || table.includes(`dnat to ${newIP}:8080`);
  }
  if (BACKEND === 'nftables') {
    // A plain ClusterIP Service's rule in its group chain names its map of endpoint slots; the endpoint is the value
    // of one of its ranges.
    const chain = execFileSync(
      'nft',
      ['list', 'chain', 'ip', 'kube-proxy', groupChainOf(`service-${servicePortBase(`default/${svc}:http`, 'tcp')}`)],
      { encoding: 'utf8' },
    );
    const map = new RegExp(
      `ip daddr ${clusterIP.replaceAll('.', '\\.')} tcp dport 80 dnat .* map @(endpoint-slots-tcp-\\d+)`,
    ).exec(chain)?.[1];
    return (
      !!map &&
      execFileSync('nft', ['list', 'map', 'ip', 'kube-proxy', map], { encoding: 'utf8', maxBuffer: 1 << 28 }).includes(
        `: ${newIP} . 8080`,
      )
    );
  }
  const save = BACKEND === 'legacy' ? 'iptables-legacy-save' : 'iptables-nft-save';
  return execFileSync(save, ['-t', 'nat'], { encoding: 'utf8', maxBuffer: 1 << 30 }).includes(
    `--to-destination ${newIP}:8080`,
  );
}

/** A size's figures for the upstream kube-proxy: tskube's rows but the floors and the in-process splits. */
interface UpstreamRow {
  services: number;
  coldMs: number | null;
  overBudgetMs?: number;
  coldSyncMs?: number;
  coldCpuMs?: number;
  coldChildCpuMs?: number;
  changeMs?: number[];
  changeCpuMs?: number;
  changeChildCpuMs?: number;
  rssMiB?: number;
  /** null: over BENCH_COLD_BUDGET_MS. */
  restartMs?: number | null;
  restartSyncMs?: number | null;
}

/** A sync's figures, or undefined when it did not come within the budget. */
const withinBudget = <T>(p: Promise<T>): Promise<T | undefined> =>
  p.catch((e: Error) => (e.message.includes('did not sync') ? undefined : Promise.reject(e)));

/**
 * The upstream kube-proxy at this size, as tskube's is measured: cold start with no rules in the kernel, CHANGES
 * one-endpoint changes (from the update request to the end of the sync that wrote it, by its own timestamp), a
 * restart over its own rules, RSS and CPU.
 */
async function measureUpstream(
  binary: string,
  dir: string,
  kubeconfig: string,
  client: KubeClient,
  n: number,
  firstChange: number,
): Promise<UpstreamRow> {
  clearRules();
  const mode = BACKEND === 'nftables' ? 'nftables' : 'iptables';
  const iptablesDir = BACKEND === 'legacy' ? legacyIptablesDir(dir) : undefined;
  const cold = new UpstreamProxy(binary, kubeconfig, mode, dir, iptablesDir);
  try {
    const first = await withinBudget(cold.syncAfter(0, BUDGET_MS, { everyMs: 100 }));
    if (!first) return { services: n, coldMs: null, overBudgetMs: BUDGET_MS };
    const atFirst = cold.usage();
    const changes: number[] = [];
    for (let k = 0, change = firstChange; k < CHANGES; k++, change++) {
      await new Promise((r) => setTimeout(r, 1100)); // outside minSyncPeriod, as for tskube's
      const name = `svc${(change * 997) % n}`;
      const url = `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${name}-x`;
      const cur = await client.get(url);
      const newIP = ip(200_000 + change, 12);
      cur.endpoints[0].addresses = [newIP];
      const seen = await cold.endpointChanges();
      const u0 = wallMs();
      await client.update(url, cur);
      const synced = await cold.syncAfter(u0, 60_000, { changesAbove: seen });
      changes.push(synced.at - u0);
      if (
        k === 0 &&
        !inKernel(newIP, name, (await client.get(`/api/v1/namespaces/default/services/${name}`)).spec.clusterIP)
      )
        throw new Error(`${MODE}: the new endpoint ${newIP} is not in the kernel`);
    }
    const steady = cold.usage();
    await cold.stop();
    const warm = new UpstreamProxy(binary, kubeconfig, mode, dir, iptablesDir);
    try {
      const restart = await withinBudget(warm.syncAfter(0, BUDGET_MS, { everyMs: 100 }));
      return {
        services: n,
        coldMs: first.at - cold.startedAt,
        coldSyncMs: first.fullSyncSec * 1000,
        coldCpuMs: atFirst.cpuMs,
        coldChildCpuMs: atFirst.childCpuMs,
        changeMs: changes,
        changeCpuMs: (steady.cpuMs - atFirst.cpuMs) / CHANGES,
        changeChildCpuMs: (steady.childCpuMs - atFirst.childCpuMs) / CHANGES,
        rssMiB: steady.rssMiB,
        restartMs: restart ? restart.at - warm.startedAt : null,
        restartSyncMs: restart ? restart.fullSyncSec * 1000 : null,
      };
    } finally {
      await warm.stop();
    }
  } finally {
    await cold.stop();
  }
}

/** The run's files (certificates, the upstream proxy's config and log), removed however it ends. */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-proxy-'));

async function main(): Promise<void> {
  const max = Math.max(...SIZES);
  const srv = await startApiServer({
    certDir: dir,
    bindAddress: '127.0.0.1',
    securePort: 0,
    advertiseAddress: '',
    serviceClusterIpRange: '10.96.0.0/12',
    nodeNames: [],
    controllers: [],
    historySize: 2 * max + 1000,
    log: () => {},
  });
  const kubeconfig = srv.kubeconfigs['kubernetes-admin']!;
  const client = new KubeClient(loadKubeconfig(kubeconfig));
  const api = srv.api;
  // The node both proxies run as (upstream's waits for its Node object before it starts).
  api.create(api.res('', 'nodes'), '', {
    metadata: { name: 'bench' },
    status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] },
  });
  const svcs = api.res('', 'services');
  const slices = api.res('discovery.k8s.io', 'endpointslices');
  // A slice's endpoints as text, so that a floor ConfigMap is about a slice's size.
  const filler = JSON.stringify(
    Array.from({ length: EPS }, (_, e) => ({ addresses: [ip(e + 1, 11)], conditions: { ready: true } })),
  );
  if (MODE === 'nftables')
    for (let k = 0; k < CHANGES; k++)
      api.create(api.res('', 'configmaps'), 'default', {
        metadata: { name: `floor-${k}`, labels: FLOOR_LABELS },
        data: { v: '0', filler },
      });
  const rows: object[] = [];
  let have = 0;
  let change = 0;
  for (const n of SIZES) {
    // Straight into the Api: tens of thousands of objects over HTTPS would take longer than the measurement.
    for (; have < n; have++) {
      api.create(svcs, 'default', {
        metadata: { name: `svc${have}` },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      });
      api.create(slices, 'default', {
        metadata: { name: `svc${have}-x`, labels: { 'kubernetes.io/service-name': `svc${have}` } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: Array.from({ length: EPS }, (_, e) => ({
          addresses: [ip(have * EPS + e + 1, 11)],
          conditions: { ready: true },
        })),
      });
    }
    if (UPSTREAM) {
      const row = await measureUpstream(UPSTREAM, dir, kubeconfig, client, n, change);
      change += CHANGES;
      rows.push(row);
      process.stdout.write(JSON.stringify({ mode: MODE, rows }) + '\n');
      if (row.coldMs === null) break;
      continue;
    }
    const floorMs = MODE === 'nftables' ? await changeFloor(kubeconfig, client, n, change) : [];
    clearRules();
    const cold = new ProxyProcess(kubeconfig);
    const first = await cold.next(0, (e) => e.full, BUDGET_MS, `cold sync at ${n}`).catch(() => undefined);
    if (!first) {
      await cold.stop();
      rows.push({ services: n, coldMs: null, overBudgetMs: BUDGET_MS });
      break;
    }
    const changes: number[] = [];
    const splits: {
      renderMs: number;
      applyMs: number;
      requestMs: number;
      toProxierMs: number;
      toSyncMs: number;
      apiserverGcMs: number;
    }[] = [];
    // In turns with the proxy's changes: the floor from a watcher as large as the proxy, on updates the proxy does not see.
    const sized =
      MODE === 'nftables'
        ? await FloorWatcher.start(kubeconfig, first.rssMiB, ['/api/v1/namespaces/default/configmaps', FLOOR_SELECTOR])
        : undefined;
    const sizedFloorMs: number[] = [];
    const cpu0 = cold.last()!;
    for (let k = 0; k < CHANGES; k++, change++) {
      await new Promise((r) => setTimeout(r, 1100)); // outside minSyncPeriod, so the sync is not held back
      const name = `svc${(change * 997) % n}`;
      const cur = await client.get(`/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${name}-x`);
      const newIP = ip(200_000 + change, 12);
      cur.endpoints[0].addresses = [newIP];
      const before = cold.events.length;
      const u0 = wallMs();
      const gc0 = runnerGc.ms;
      await client.update(`/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${name}-x`, cur);
      const u1 = wallMs();
      const ev = await cold.next(before, (e) => !e.full && e.changed > 0, 60_000, 'partial sync');
      changes.push(ev.end - u0);
      splits.push({
        renderMs: ev.renderMs,
        applyMs: ev.applyMs,
        requestMs: u1 - u0,
        toProxierMs: ev.sliceAt - u0,
        toSyncMs: ev.begin - u0,
        apiserverGcMs: runnerGc.ms - gc0,
      });
      if (
        k === 0 &&
        !inKernel(newIP, name, (await client.get(`/api/v1/namespaces/default/services/${name}`)).spec.clusterIP)
      )
        throw new Error(`${MODE}: the new endpoint ${newIP} is not in the kernel`);
      if (!sized) continue;
      await new Promise((r) => setTimeout(r, 1100));
      sizedFloorMs.push(await sized.time(client, floorConfigMap(k), (o) => (o.data.v = String(change + 1))));
    }
    const steady = cold.last()!;
    sized?.stop();
    await cold.stop();
    // A restart over its own rules: list, diff, converge (nftables) or restore everything again (iptables).
    const warm = new ProxyProcess(kubeconfig);
    const restart = await warm.next(0, (e) => e.full, BUDGET_MS, `restart sync at ${n}`);
    await warm.stop();
    rows.push({
      services: n,
      coldMs: first.at - cold.startedAt,
      coldSyncMs: first.renderMs + first.applyMs,
      coldCpuMs: first.cpuMs,
      coldChildCpuMs: first.childCpuMs,
      changeMs: changes,
      floorMs,
      sizedFloorMs,
      sizedFloorRssMiB: sized?.rssMiB ?? 0,
      splits,
      changeCpuMs: (steady.cpuMs - cpu0.cpuMs) / CHANGES,
      changeGcMs: (steady.gcMs - cpu0.gcMs) / CHANGES,
      changeGcMajor: (steady.gcMajor - cpu0.gcMajor) / CHANGES,
      changeChildCpuMs: (steady.childCpuMs - cpu0.childCpuMs) / CHANGES,
      rssMiB: steady.rssMiB,
      restartMs: restart.at - warm.startedAt,
      restartSyncMs: restart.renderMs + restart.applyMs,
    });
    // Rows so far after each size: what bench/proxy-sync.ts keeps if a later size fails.
    process.stdout.write(JSON.stringify({ mode: MODE, rows }) + '\n');
  }
  client.close();
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ mode: MODE, rows }) + '\n');
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`runner failed: ${(e as Error).stack}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
