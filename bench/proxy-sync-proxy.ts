// bench/proxy-sync, the kube-proxy under measurement: the real proxier and
// backend of one mode (argv[3]: nftables, or iptables with BENCH_IPT=legacy
// for iptables-legacy), watching the apiserver of argv[2]'s kubeconfig. After
// every sync it prints one JSON line: when it ended, whether it was full, its
// render/apply split, and the process's RSS and CPU (its own, and that of the
// nft / iptables-restore children it waited for).
import { PerformanceObserver } from 'node:perf_hooks';

import { loadProxyConfig } from '../cli/proxy-config.js';
import { KubeClient } from '../kube/client.js';
import { ExecIptables } from '../kube/iptables.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createLogger } from '../kube/log.js';
import { ProxyHealth } from '../proxy/health.js';
import { proxyBackends } from '../proxy/main.js';
import { ProxyMetrics } from '../proxy/metrics.js';
import { Proxier } from '../proxy/proxier.js';
import { childCpuSeconds } from './stats.js';

/** Time spent in garbage collection so far, and the count of major (mark-compact) collections. */
const gc = { ms: 0, major: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.ms += e.duration;
    // NODE_PERFORMANCE_GC_MAJOR
    if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === 4) gc.major++;
  }
}).observe({ entryTypes: ['gc'] });

async function main(): Promise<void> {
  const [kubeconfig, mode] = process.argv.slice(2);
  const cfg = loadProxyConfig(
    [
      `--kubeconfig=${kubeconfig!}`,
      `--proxy-mode=${mode!}`,
      '--hostname-override=bench',
      '--cluster-cidr=11.0.0.0/8',
      '--iptables-sync-period=10m',
      '--iptables-min-sync-period=1s',
    ],
    () => {},
  );
  const log = createLogger('kube-proxy', { sink: () => {} });
  const metrics = new ProxyMetrics();
  const ipt =
    process.env.BENCH_IPT === 'legacy'
      ? new ExecIptables({
          iptables: 'iptables-legacy',
          restore: 'iptables-legacy-restore',
          save: 'iptables-legacy-save',
        })
      : undefined;
  const backends = await proxyBackends(cfg, { metrics, log, conntrackTCPLiberal: false, ipt });
  const client = new KubeClient(loadKubeconfig(cfg.kubeconfig));
  const proxier = new Proxier(
    {
      nodeName: cfg.nodeName,
      clusterCIDR: cfg.clusterCIDR,
      masqueradeAll: false,
      masqueradeBit: 14,
      syncPeriodMs: cfg.syncPeriodMs,
      minSyncPeriodMs: cfg.minSyncPeriodMs,
      localhostNodePorts: false,
      conntrackTCPLiberal: false,
    },
    { client, backends, log, metrics, health: new ProxyHealth(1_200_000), conntrack: async () => 0 },
  );
  // When the last EndpointSlice event reached the proxier (its informer's handler).
  let sliceAt = 0;
  const handlers = proxier as unknown as { onSlice: (...a: unknown[]) => void };
  const onSlice = handlers.onSlice.bind(proxier);
  handlers.onSlice = (...a: unknown[]) => {
    sliceAt = performance.timeOrigin + performance.now();
    onSlice(...a);
  };
  const sync = proxier.sync.bind(proxier);
  proxier.sync = async () => {
    // Fractional wall-clock ms, comparable with the runner's (performance.timeOrigin + performance.now()).
    const begin = performance.timeOrigin + performance.now();
    const before = proxier.syncs;
    await sync();
    const end = performance.timeOrigin + performance.now();
    if (proxier.syncs === before) return; // not initialized yet, or failed
    const cpu = process.cpuUsage();
    const s = proxier.lastSync;
    process.stdout.write(
      JSON.stringify({
        ev: 'sync',
        syncs: proxier.syncs,
        sliceAt,
        begin,
        end,
        at: s.at,
        full: s.full,
        changed: s.changed,
        renderMs: s.renderMs,
        applyMs: s.applyMs,
        rssMiB: process.memoryUsage().rss / 2 ** 20,
        cpuMs: (cpu.user + cpu.system) / 1000,
        gcMs: gc.ms,
        gcMajor: gc.major,
        childCpuMs: childCpuSeconds(process.pid) * 1000,
      }) + '\n',
    );
  };
  process.stdout.write(JSON.stringify({ ev: 'start', at: Date.now() }) + '\n');
  await proxier.start();
}

main().catch((e: unknown) => {
  process.stderr.write(`bench proxy failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
