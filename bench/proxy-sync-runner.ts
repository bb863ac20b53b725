// bench/proxy-sync, the part that runs inside a throwaway network namespace
// (its iptables are the namespace's own). Prints one JSON line.
// 1. Full syncs at 1k, 5k and 10k services x 10 endpoints: render time and
//    iptables-restore time, separately, on one iptables backend (argv[2]:
//    "nft", the system default here, or "legacy"). A restore that takes longer
//    than the budget ends the series for that backend.
// 2. With a dev apiserver and the real proxier watching the largest size that
//    fit: the time from one EndpointSlice update to the restore that put it in
//    the kernel.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderIptables } from '../proxy/iptables/render.js';
import { chainsInSave, ExecIptables } from '../proxy/iptables/apply.js';
import type { ServicePort } from '../proxy/model/service-port.js';
import { portKey, type Endpoint } from '../proxy/model/endpoints.js';
import { startApiServer } from '../apiserver/main.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createLogger } from '../kube/log.js';
import { Proxier } from '../proxy/proxier.js';
import { ProxyMetrics } from '../proxy/metrics.js';
import { ProxyHealth } from '../proxy/health.js';
import { waitFor } from '../e2e/proc.js';
import { percentile } from './stats.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,5000,10000').split(',').map(Number);
const EPS = 10;
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const BACKEND = process.argv[2] === 'legacy' ? 'legacy' : 'nft';
const BINS = BACKEND === 'legacy' ? { iptables: 'iptables-legacy', restore: 'iptables-legacy-restore', save: 'iptables-legacy-save' } : { iptables: 'iptables-nft', restore: 'iptables-nft-restore', save: 'iptables-nft-save' };
/** Larger sizes are skipped once one restore takes longer than this. */
const BUDGET_MS = Number(process.env.BENCH_RESTORE_BUDGET_MS ?? 180_000);

const ip = (n: number, base: number): string => `${base}.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

function synthetic(n: number): { services: ServicePort[]; endpoints: Map<string, Endpoint[]> } {
  const services: ServicePort[] = [];
  const endpoints = new Map<string, Endpoint[]>();
  for (let i = 0; i < n; i++) {
    const service = `ns${i % 50}/svc${i}`;
    services.push({ name: `${service}:http`, service, portName: 'http', protocol: 'TCP', clusterIP: ip(i + 10, 10), port: 80, nodePort: 0, externalIPs: [], loadBalancerIPs: [], loadBalancerSourceRanges: [], stickySeconds: 0, externalPolicyLocal: false, internalPolicyLocal: false, healthCheckNodePort: 0 });
    const eps: Endpoint[] = [];
    for (let e = 0; e < EPS; e++) {
      const a = ip(i * EPS + e + 1, 11);
      eps.push({ ip: a, port: 8080, addr: `${a}:8080`, ready: true, serving: true, terminating: false, local: false, nodeName: 'n' });
    }
    endpoints.set(portKey(service, 'http', 'TCP'), eps.sort((x, y) => (x.addr < y.addr ? -1 : 1)));
  }
  return { services, endpoints };
}

async function fullSyncs(): Promise<{ rows: object[]; largest: number }> {
  const ipt = new ExecIptables(BINS, BUDGET_MS);
  const rows: object[] = [];
  let largest = 0;
  for (const n of SIZES) {
    const { services, endpoints } = synthetic(n);
    const render: number[] = [];
    const apply: number[] = [];
    let lines = 0;
    let bytes = 0;
    for (let r = 0; r < REPEAT; r++) {
      const existing = chainsInSave(execFileSync(BINS.save, ['-t', 'nat'], { encoding: 'utf8', maxBuffer: 1 << 30 }));
      const t0 = performance.now();
      const out = renderIptables({ services, endpoints, masqueradeMark: '0x4000', masqueradeAll: false, clusterCIDR: '11.0.0.0/8', localhostNodePorts: true, conntrackTCPLiberal: false, randomFully: true, existingNatChains: existing });
      const t1 = performance.now();
      const timedOut = await ipt.restore(out.text).then(
        () => false,
        (e: Error) => {
          if (/did not finish/.test(e.message)) return true;
          throw e;
        },
      );
      if (timedOut) {
        rows.push({ services: n, endpoints: n * EPS, lines: out.text.split('\n').length, bytes: out.text.length, renderMs: t1 - t0, applyMs: null, overBudgetMs: BUDGET_MS });
        return { rows, largest };
      }
      const t2 = performance.now();
      render.push(t1 - t0);
      apply.push(t2 - t1);
      lines = out.text.split('\n').length;
      bytes = out.text.length;
    }
    rows.push({ services: n, endpoints: n * EPS, lines, bytes, renderMs: percentile(render, 50), applyMs: percentile(apply, 50) });
    largest = n;
  }
  return { rows, largest };
}

async function endToEnd(n: number): Promise<object> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-proxy-'));
  const srv = await startApiServer({ certDir: dir, bindAddress: '127.0.0.1', securePort: 0, advertiseAddress: '', serviceClusterIpRange: '10.96.0.0/12', nodeNames: [], controllers: [], historySize: 4 * n + 1000, log: () => {} });
  const client = new KubeClient(loadKubeconfig(srv.kubeconfigs['kubernetes-admin']!));
  // Straight into the Api: 2n objects over HTTPS would take longer than the measurement.
  const api = srv.api;
  const svcs = api.res('', 'services');
  const slices = api.res('discovery.k8s.io', 'endpointslices');
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    api.create(svcs, 'default', { metadata: { name: `svc${i}` }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    api.create(slices, 'default', {
      metadata: { name: `svc${i}-x`, labels: { 'kubernetes.io/service-name': `svc${i}` } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: EPS }, (_, e) => ({ addresses: [ip(i * EPS + e + 1, 11)], conditions: { ready: true } })),
    });
  }
  const createMs = performance.now() - t0;
  const proxier = new Proxier(
    { nodeName: 'bench', clusterCIDR: '11.0.0.0/8', masqueradeAll: false, masqueradeBit: 14, syncPeriodMs: 600_000, minSyncPeriodMs: 1000, localhostNodePorts: true, conntrackTCPLiberal: false },
    { client, ipt: new ExecIptables(BINS), log: createLogger('kube-proxy', { sink: () => {} }), metrics: new ProxyMetrics(), health: new ProxyHealth(1_200_000) },
  );
  const s0 = performance.now();
  await proxier.start();
  const firstSyncMs = performance.now() - s0;
  const first = { ...proxier.lastSync };
  const latencies: number[] = [];
  const splits: { renderMs: number; applyMs: number }[] = [];
  for (let k = 0; k < 5; k++) {
    await new Promise((r) => setTimeout(r, 1200)); // outside minSyncPeriod, so the sync is not held back
    const target = `svc${(k * 997) % n}-x`;
    const cur = await client.get(`/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${target}`);
    const newIP = ip(200_000 + k, 12);
    cur.endpoints[0].addresses = [newIP];
    const syncsBefore = proxier.syncs;
    const u0 = Date.now();
    await client.update(`/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${target}`, cur);
    await waitFor(() => proxier.syncs > syncsBefore, 60_000, 1, 'partial sync');
    latencies.push(proxier.lastSync.at - u0);
    splits.push({ renderMs: proxier.lastSync.renderMs, applyMs: proxier.lastSync.applyMs });
    if (k === 0 && !execFileSync(BINS.save, ['-t', 'nat'], { encoding: 'utf8', maxBuffer: 1 << 30 }).includes(`--to-destination ${newIP}:8080`)) throw new Error('the new endpoint is not in the kernel');
  }
  await proxier.stop();
  client.close();
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  return { services: n, createMs, firstSyncMs, firstRenderMs: first.renderMs, firstApplyMs: first.applyMs, updateToKernelMs: latencies, partial: splits };
}

async function main(): Promise<void> {
  const { rows, largest } = await fullSyncs();
  const e2e = largest ? await endToEnd(largest) : null;
  process.stdout.write(JSON.stringify({ backend: BACKEND, full: rows, e2e }) + '\n');
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`runner failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
